//! Every input the fuzzers (`fuzz/`, `scripts/fuzz.sh`) found crashing is
//! kept in `fuzz/regressions/TARGET/` and replayed here through the same
//! steps as its target, so `cargo test` fails if one crashes again. (The
//! fuzz build also has overflow checks and AddressSanitizer; `scripts/fuzz.sh
//! TARGET 0` replays them there.)

use onnx_light::expr::{Bindings, Expr};
use onnx_light::repl::tensor_expr::{eval, Env, Rng};
use onnx_light::repl::Session;
use onnx_light::{proto, shape, text};
use std::path::Path;

fn proto_load(data: &[u8]) {
    let Ok(model) = proto::decode_model(data) else {
        return;
    };
    let _ = shape::infer_model(&mut model.clone());
    let printed = text::print_model(&model);
    let _ = text::parse_model(&printed);
    let _ = text::pretty(&model);
}

fn text_parse(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut model) = text::parse_model(src) else {
        return;
    };
    let printed = text::print_model(&model);
    let _ = text::parse_model(&printed);
    let _ = shape::infer_model(&mut model);
}

fn dim_expr(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(e) = Expr::parse(src) else {
        return;
    };
    let _ = Expr::parse(&e.to_string());
    let s = e.simplify();
    let mut b = Bindings::new();
    for (i, sym) in e.symbols().into_iter().enumerate() {
        b.insert(sym, [3, -2, 0, i64::MAX, i64::MIN, 1][i % 6]);
    }
    let _ = e.eval(&b);
    let _ = s.eval(&b);
}

fn tensor_expr(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if src.contains("npy") || src.contains("pb(") {
        return;
    }
    let mut b = Bindings::new();
    b.insert("N".into(), 3);
    let mut rng = Rng::new(0);
    let mut env = Env {
        bindings: &b,
        rng: &mut rng,
        base: Path::new("/nonexistent"),
    };
    let _ = eval(src, &mut env);
}

fn command_line(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let skip = [
        "save", "--out", "source", "load", "npy", "pb(", "bench", "max-", "-o",
    ];
    if skip.iter().any(|s| src.contains(s)) {
        return;
    }
    let mut s = Session::new();
    s.execute(
        "parse <ir_version: 10, opset_import: [\"\" : 18]> \
         agraph (float[N,4] x) => (float[M,2] y) \
         <float two = {2.0}, int64[2] target_shape = {-1, 2}> \
         { z = Mul(x, two) w = Add(z, x) y = Reshape(w, target_shape) }",
    )
    .expect("the seed model parses");
    for line in src.lines() {
        let _ = s.execute(line);
    }
}

/// One fuzz target's steps.
type Target = fn(&[u8]);

#[test]
fn fuzz_crashes_stay_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let targets: [(&str, Target); 5] = [
        ("proto_load", proto_load),
        ("text_parse", text_parse),
        ("dim_expr", dim_expr),
        ("tensor_expr", tensor_expr),
        ("command_line", command_line),
    ];
    let mut replayed = 0;
    for (name, run) in targets {
        let Ok(dir) = std::fs::read_dir(root.join(name)) else {
            continue;
        };
        for entry in dir {
            let path = entry.expect("a directory entry").path();
            let data = std::fs::read(&path).expect("a readable regression input");
            let r = std::panic::catch_unwind(|| run(&data));
            assert!(r.is_ok(), "{} crashes again", path.display());
            replayed += 1;
        }
    }
    assert!(replayed > 0, "fuzz/regressions holds no inputs");
}
