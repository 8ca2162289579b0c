//! The ONNX backend conformance suite (`../shared/onnx-backend/node`, or
//! `$ONNX_BACKEND_DIR`): fails when the pass count drops below the figure
//! recorded in `tests/backend_baseline.txt`. Skips, saying so, when the
//! folder is absent.

use crate::common;

use onnx_light::runtime::conformance::{collect_cases, run_case};
use onnx_light::runtime::tolerance::Tolerance;
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
        common::data_missing(&format!("no backend suite at {}", dir.display()));
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
    let results: Vec<_> = cases
        .iter()
        .map(|c| run_case(c, &Tolerance::default()))
        .collect();
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

/// Runs without events reuse the constant part of the graph: the second
/// and third runs (served from that cache) must give the expected outputs
/// too, and a run with events (no cache) the same.
#[test]
fn constant_cache_gives_the_same_outputs() {
    use onnx_light::runtime::conformance::load_case;
    use onnx_light::runtime::tolerance::{compare_values, Tolerance};
    use onnx_light::runtime::{Plan, RunOptions};
    let root = common::models_dir();
    if !root.is_dir() {
        common::data_missing(&format!("no models at {}", root.display()));
        return;
    }
    for name in ["light_squeezenet", "light_resnet50"] {
        let (model, sets) = load_case(&root.join(name)).expect("the model loads");
        let plan = Plan::new(&model).expect("the model plans");
        let set = &sets[0];
        for (events, release) in [(false, true), (false, true), (true, false), (false, true)] {
            let opts = RunOptions {
                events,
                release,
                max_values: 4,
                ..Default::default()
            };
            let res = plan.run(set.inputs.clone(), &opts).expect("the model runs");
            let want = set.outputs[0].as_ref().expect("an expected output");
            compare_values(&res.outputs[0].1, want, &Tolerance::default())
                .unwrap_or_else(|e| panic!("{name} (events {events}): {e}"));
        }
    }
}
