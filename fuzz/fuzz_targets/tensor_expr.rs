//! Text as a tensor expression (`run x=...`): parsing and evaluating,
//! with the memory budget at 256 MiB.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_light::expr::Bindings;
use onnx_light::repl::tensor_expr::{eval, Env, Rng};
use onnx_light::tensor::budget;

fuzz_target!(|data: &[u8]| {
    budget::set_limit(Some(256 << 20));
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    // file readers are exercised elsewhere; keep the fuzzer off the disk
    if src.contains("npy") || src.contains("pb(") {
        return;
    }
    let mut b = Bindings::new();
    b.insert("N".into(), 3);
    let mut rng = Rng::new(0);
    let mut env = Env {
        bindings: &b,
        rng: &mut rng,
        base: std::path::Path::new("/nonexistent"),
    };
    let _ = eval(src, &mut env);
});
