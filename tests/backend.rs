//! The ONNX backend conformance suite (`../shared/onnx-backend/node`, or
//! `$ONNX_BACKEND_DIR`): fails when the pass count drops below the figure
//! recorded in `tests/backend_baseline.txt`. Skips, saying so, when the
//! folder is absent.

use onnx_light::runtime::backend::{collect_cases, run_case};
use std::path::PathBuf;

fn suite_dir() -> PathBuf {
    match std::env::var_os("ONNX_BACKEND_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/onnx-backend/node"),
    }
}

#[test]
fn backend_pass_count_does_not_drop() {
    let dir = suite_dir();
    if !dir.is_dir() {
        eprintln!("skipped: no backend suite at {}", dir.display());
        return;
    }
    let baseline: usize = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/backend_baseline.txt"),
    )
    .expect("tests/backend_baseline.txt exists")
    .trim()
    .parse()
    .expect("the baseline is a number");
    let cases = collect_cases(&[dir]).expect("the suite has cases");
    let results: Vec<_> = cases.iter().map(|c| run_case(c)).collect();
    let passed = results.iter().filter(|r| r.passed).count();
    eprintln!(
        "backend suite: {passed} of {} passed (baseline {baseline})",
        results.len()
    );
    assert!(
        passed >= baseline,
        "the backend pass count dropped: {passed} < {baseline}"
    );
}
