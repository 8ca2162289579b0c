//! Times `onnx_light::text::parse_model` and `print_model` on a text model.
//!
//! `cargo run --release --example bench_text -- FILE [RUNS]` prints one line
//! per phase: `parse_s SECONDS` and `print_s SECONDS` (best of RUNS, default 3).

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: bench_text FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let text = std::fs::read_to_string(&path).expect("the text model is readable");
    let mut parse_best = f64::INFINITY;
    let mut print_best = f64::INFINITY;
    let mut nodes = 0;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let model = onnx_light::text::parse_model(&text).expect("the text model parses");
        parse_best = parse_best.min(t.elapsed().as_secs_f64());
        nodes = model.graph.as_ref().map_or(0, |g| g.node.len());
        let t = Instant::now();
        let out = onnx_light::text::print_model(&model);
        print_best = print_best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    eprintln!("nodes {nodes}");
    println!("parse_s {parse_best:.4}");
    println!("print_s {print_best:.4}");
}
