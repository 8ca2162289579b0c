//! Models as converters write them (small text fixtures in
//! `tests/fixtures/converter/`): unknown dimensions spelled `-1`, `"?"`,
//! `""` or `?`, and declared shapes in foreign syntax. Each is loaded,
//! inferred, run and checked through the shell, as a user would.

mod common;

fn shell(script: &str) -> common::Output {
    let out = common::run(&["--no-color", "-c", script], None);
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    out
}

#[test]
fn unknown_dims_are_each_their_own_symbol() {
    let out = shell(
        "load tests/fixtures/converter/unknown_dims.txt; infer; \
         run x=rand(2,3,4,5) z=rand(7,2); check; let",
    );
    let o = &out.stdout;
    // one fresh symbol per unknown input dimension, carried by inference
    assert!(o.contains("float[unk__1,3,unk__2,unk__3]"), "{o}");
    assert!(o.contains("float[unk__4,2]"), "{o}");
    // the run binds each from the tensor given: no clash between the
    // unknowns of x (2, 4, 5), and -1 is never taken as a size
    for (sym, v) in [("unk__1", 2), ("unk__2", 4), ("unk__3", 5), ("unk__4", 7)] {
        assert!(
            o.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [sym, &v.to_string()]),
            "{sym} = {v} missing:\n{o}"
        );
    }
    assert!(o.contains("4 OK, 0 MISMATCH, 0 UNKNOWN"), "{o}");
}

#[test]
fn unknown_dims_survive_a_text_round_trip() {
    let dir = std::env::temp_dir().join(format!("onnx-light-quirks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let txt = dir.join("m.txt");
    let bin = dir.join("m.onnx");
    shell(&format!(
        "load tests/fixtures/converter/unknown_dims.txt; save {}; load {}; save {}; load {}",
        txt.display(),
        txt.display(),
        bin.display(),
        bin.display()
    ));
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.contains(r#"float[-1,3,"?",""] x"#), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
