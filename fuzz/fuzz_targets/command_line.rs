//! Lines typed at the prompt, on a session holding a small model with a
//! symbolic batch (the walkthrough's): each line runs as a command. Lines
//! that write or read files (`save`, `--out`, `source`, `load`, `npy`,
//! `pb`) and `bench` (timing loops) are left out, as is raising the
//! memory budget; everything else runs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_light::repl::Session;
use onnx_light::runtime::limits;
use onnx_light::tensor::budget;

const MODEL: &str = "parse <ir_version: 10, opset_import: [\"\" : 18]> \
    agraph (float[N,4] x) => (float[M,2] y) \
    <float two = {2.0}, int64[2] target_shape = {-1, 2}> \
    { z = Mul(x, two) w = Add(z, x) y = Reshape(w, target_shape) }";

const SKIP: [&str; 9] = [
    "save",
    "--out",
    "source",
    "load",
    "npy",
    "pb(",
    "bench",
    "max-memory",
    "-o",
];

fuzz_target!(|data: &[u8]| {
    budget::set_limit(Some(256 << 20));
    limits::set_max_iterations(10_000);
    limits::set_max_events(10_000);
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if SKIP.iter().any(|s| src.contains(s)) || src.lines().count() > 16 {
        return;
    }
    let mut s = Session::new();
    if s.execute(MODEL).is_err() {
        panic!("the seed model must parse");
    }
    for line in src.lines() {
        if line.contains("max-iterations") || line.contains("max-events") {
            continue;
        }
        let _ = s.execute(line);
    }
});
