//! The ai.onnx.ml domain in the shell: map values (typed as `{key: value}`,
//! printed as dicts, read from `.pb` test data), ZipMap's sequence of maps,
//! DictVectorizer and CastMap; and every scikit-learn conversion that
//! `scripts/gen_sklearn.py` writes (CI generates them into
//! `target/sklearn-cases`; `ONNX_LIGHT_SKLEARN_CASES` points elsewhere).

use crate::common;

use common::{cmds, data_missing, root, run};

const ML: &str = r#"<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 1]>"#;

#[test]
fn zipmap_gives_a_sequence_of_maps_that_print_and_log_like_values() {
    let o = cmds(&format!(
        "parse {ML} g (float[N,3] x) => (seq(map(string, float)) z) {{ \
           z = ai.onnx.ml.ZipMap <classlabels_strings = [\"cat\", \"dog\", \"eel\"]> (x) }}; \
         infer; run x=[[0.25, 0.5, 0.25], [1, 0, 0]]; print z; events --kind output --format json; \
         print z --format csv; print z --format json"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    assert!(out.contains("seq(map(string, float"), "{out}");
    assert!(
        out.contains("sequence of 2 maps (string to float)"),
        "{out}"
    );
    assert!(
        out.contains("[0] {'cat': 0.25, 'dog': 0.5, 'eel': 0.25}"),
        "{out}"
    );
    assert!(
        out.contains("[1] {'cat': 1., 'dog': 0., 'eel': 0.}"),
        "{out}"
    );
    assert!(
        out.contains("\"shape\": [\n      2\n    ]") || out.contains("\"shape\": [2]"),
        "{out}"
    );
}

#[test]
fn zipmap_refuses_rows_of_the_wrong_width_and_both_label_kinds() {
    let o = cmds(&format!(
        "parse {ML} g (float[N,2] x) => (seq(map(int64, float)) z) {{ \
           z = ai.onnx.ml.ZipMap <classlabels_int64s = [1, 2, 3]> (x) }}; run x=[[1, 2]]"
    ));
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("X has 2 scores per row but there are 3 class labels"),
        "{}",
        o.stderr
    );
    let o = cmds(&format!(
        "parse {ML} g (float[N,2] x) => (seq(map(int64, float)) z) {{ \
           z = ai.onnx.ml.ZipMap <classlabels_int64s = [1, 2], classlabels_strings = [\"a\", \"b\"]> (x) }}; run x=[[1, 2]]"
    ));
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("exactly one of the attributes"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_map_typed_in_the_shell_feeds_dict_vectorizer_and_cast_map() {
    let o = cmds(&format!(
        "parse {ML} g (map(string, float) m) => (float[1,3] y) {{ \
           y = ai.onnx.ml.DictVectorizer <string_vocabulary = [\"a\", \"b\", \"c\"]> (m) }}; \
         run m={{\"c\": 3, \"a\": 1.5, \"zzz\": 9}}; print m"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("[[1.5  0.  3.]]"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("{'c': 3., 'a': 1.5, 'zzz': 9.}  # map(string, float)"),
        "{}",
        o.stdout
    );

    let o = cmds(&format!(
        "parse {ML} g (map(int64, string) m) => (float[1,K] dense, string[1,4] sparse) {{ \
           dense = ai.onnx.ml.CastMap <cast_to = \"TO_FLOAT\"> (m) \
           sparse = ai.onnx.ml.CastMap <cast_to = \"TO_STRING\", map_form = \"SPARSE\", max_map = 4> (m) }}; \
         run m={{3: \"2.5\", 1: \"-1\"}}"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("[[-1. 2.5]]"), "{}", o.stdout);
    assert!(o.stdout.contains("[['' '-1' '' '2.5']]"), "{}", o.stdout);
}

#[test]
fn bad_maps_are_clear_errors() {
    let model = format!(
        "parse {ML} g (map(string, float) m) => (float[1,2] y) {{ \
           y = ai.onnx.ml.DictVectorizer <string_vocabulary = [\"a\", \"b\"]> (m) }}"
    );
    for (value, want) in [
        ("{1: 2.0}", "declared with string keys, got int64 keys"),
        ("{\"a\": 1, \"a\": 2}", "map keys must be distinct"),
        (
            "{\"a\": 1, 2: 2}",
            "map keys must be all integers or all strings",
        ),
        (
            "{\"a\": [1, 2]}",
            "map values must be single numbers or strings",
        ),
        ("{\"a\" 1}", "expected ':' after a map key"),
        ("[1, 2]", "input 'm' expects a map, got int64[2]"),
    ] {
        let o = cmds(&format!("{model}; run m={value}"));
        assert_eq!(o.code, 1, "{value}: {}", o.stdout);
        assert!(o.stderr.contains(want), "{value}: {}", o.stderr);
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    }
}

#[test]
fn a_wrongly_typed_attribute_is_refused_by_name() {
    let o = cmds(&format!(
        "parse {ML} g (float[N] x) => (float[N] y) {{ y = ai.onnx.ml.Binarizer <threshold = 2> (x) }}; run x=[1, 3]"
    ));
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stderr
            .contains("attribute 'threshold' must be FLOAT, got INT"),
        "{}",
        o.stderr
    );
}

/// Every conversion `scripts/gen_sklearn.py` writes passes `onnx-light test`.
#[test]
fn every_generated_sklearn_conversion_passes() {
    let dir = std::env::var_os("ONNX_LIGHT_SKLEARN_CASES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target/sklearn-cases"));
    if !dir.join("binarizer/model.onnx").exists() {
        data_missing(&format!(
            "no scikit-learn cases in {} (make them with: python scripts/gen_sklearn.py {})",
            dir.display(),
            dir.display()
        ));
        return;
    }
    let o = run(&["--no-color", "test", &dir.to_string_lossy()], None);
    let all = format!("{}{}", o.stdout, o.stderr);
    let failed: Vec<&str> = all.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        failed.is_empty(),
        "{} failing:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert_eq!(o.code, 0, "{all}");
    assert!(all.contains(" passed"), "{all}");
}
