//! The hot kernels, one operator each, timed through the plan as `bench`
//! runs a model (events off, release on) on one thread: the shapes are
//! those of the real models' heaviest layers. Weights are initializers, as
//! in a model file, so kernels that prepare them at plan time do so once.
//!
//! `cargo bench --manifest-path bench/Cargo.toml` (add a filter:
//! `... -- conv`); a crate of its own so that the main crate's builds and
//! CI never compile criterion. For the comparison with onnxruntime, see
//! `scripts/bench_runtime.py`; these track our own kernels between commits.

use criterion::{criterion_group, criterion_main, Criterion};
use onnx_light::proto::{to_proto, ModelProto};
use onnx_light::runtime::{Plan, RunOptions};
use onnx_light::tensor::{Tensor, Value};
use std::collections::HashMap;

/// One case: its name, its graph in ONNX text, and the shapes of the
/// graph inputs that become initializers (`w`, `b`) or inputs (`x`, `y`).
struct Case {
    name: &'static str,
    text: &'static str,
    weights: &'static [(&'static str, &'static [usize])],
    inputs: &'static [(&'static str, &'static [usize])],
}

const CASES: &[Case] = &[
    Case {
        name: "conv3x3_64x56x56",
        text: "g (float[1,64,56,56] x, float[64,64,3,3] w) => (float[1,64,56,56] y) {
            y = Conv <pads = [1, 1, 1, 1]> (x, w) }",
        weights: &[("w", &[64, 64, 3, 3])],
        inputs: &[("x", &[1, 64, 56, 56])],
    },
    Case {
        name: "conv1x1_128x28x28",
        text: "g (float[1,128,28,28] x, float[128,128,1,1] w) => (float[1,128,28,28] y) {
            y = Conv (x, w) }",
        weights: &[("w", &[128, 128, 1, 1])],
        inputs: &[("x", &[1, 128, 28, 28])],
    },
    Case {
        name: "depthwise3x3_s2_96x112x112",
        text: "g (float[1,96,112,112] x, float[96,1,3,3] w) => (float[1,96,56,56] y) {
            y = Conv <group = 96, strides = [2, 2], pads = [1, 1, 1, 1]> (x, w) }",
        weights: &[("w", &[96, 1, 3, 3])],
        inputs: &[("x", &[1, 96, 112, 112])],
    },
    Case {
        name: "maxpool3x3_s2_64x112x112",
        text: "g (float[1,64,112,112] x) => (float[1,64,56,56] y) {
            y = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x) }",
        weights: &[],
        inputs: &[("x", &[1, 64, 112, 112])],
    },
    Case {
        name: "matmul_256x256x256",
        text: "g (float[256,256] x, float[256,256] w) => (float[256,256] y) {
            y = MatMul (x, w) }",
        weights: &[("w", &[256, 256])],
        inputs: &[("x", &[256, 256])],
    },
    Case {
        name: "matmul_vector_256x768",
        text: "g (float[1,256] x, float[256,768] w) => (float[1,768] y) {
            y = MatMul (x, w) }",
        weights: &[("w", &[256, 768])],
        inputs: &[("x", &[1, 256])],
    },
    Case {
        name: "attention_scores_4x128x64",
        text: "g (float[1,4,128,64] x, float[1,4,64,128] y) => (float[1,4,128,128] z) {
            z = MatMul (x, y) }",
        weights: &[],
        inputs: &[("x", &[1, 4, 128, 64]), ("y", &[1, 4, 64, 128])],
    },
    Case {
        name: "tanh_64x256x16",
        text: "g (float[16,64,256] x) => (float[16,64,256] y) { y = Tanh (x) }",
        weights: &[],
        inputs: &[("x", &[16, 64, 256])],
    },
    Case {
        name: "sigmoid_64x256x16",
        text: "g (float[16,64,256] x) => (float[16,64,256] y) { y = Sigmoid (x) }",
        weights: &[],
        inputs: &[("x", &[16, 64, 256])],
    },
    Case {
        name: "softmax_4x128x128",
        text: "g (float[1,4,128,128] x) => (float[1,4,128,128] y) { y = Softmax (x) }",
        weights: &[],
        inputs: &[("x", &[1, 4, 128, 128])],
    },
    Case {
        name: "layernorm_128x256",
        text: "g (float[1,128,256] x, float[256] w, float[256] b) => (float[1,128,256] y) {
            y = LayerNormalization <axis = -1> (x, w, b) }",
        weights: &[("w", &[256]), ("b", &[256])],
        inputs: &[("x", &[1, 128, 256])],
    },
    Case {
        name: "add_bias_64x56x56",
        text: "g (float[1,64,56,56] x, float[1,64,1,1] b) => (float[1,64,56,56] y) {
            y = Add (x, b) }",
        weights: &[("b", &[1, 64, 1, 1])],
        inputs: &[("x", &[1, 64, 56, 56])],
    },
];

/// Deterministic values in [-1, 1): the same data on every run.
fn data(shape: &[usize], seed: u32) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    let v: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32) * 2.0 - 1.0
        })
        .collect();
    Tensor::from_vec(shape, v).expect("the shape's element count")
}

/// The case's model with its weights moved from the graph inputs into
/// initializers.
fn model(case: &Case) -> ModelProto {
    let text = format!("<ir_version: 10, opset_import: [\"\" : 18]>\n{}", case.text);
    let mut m = onnx_light::text::parse_model(&text)
        .unwrap_or_else(|e| panic!("{}: the case's text does not parse: {e}", case.name));
    let g = m.graph.as_mut().expect("a parsed model has a graph");
    for (i, (name, shape)) in case.weights.iter().enumerate() {
        g.input.retain(|v| v.name() != *name);
        g.initializer
            .push(to_proto(&data(shape, 100 + i as u32), name));
    }
    m
}

fn kernels(c: &mut Criterion) {
    // kernels split their work over rayon's global pool: one thread
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("the global pool is built here first, with one thread");
    let quiet = RunOptions {
        events: false,
        release: true,
        hold_outputs: false,
        ..RunOptions::default()
    };
    for case in CASES {
        let plan = Plan::new(&model(case))
            .unwrap_or_else(|e| panic!("{}: the plan fails: {e}", case.name));
        let inputs: HashMap<String, Value> = case
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (n, s))| (n.to_string(), Value::Tensor(data(s, i as u32 + 1))))
            .collect();
        // one run outside the timing checks that the case runs at all
        plan.run(inputs.clone(), &quiet)
            .unwrap_or_else(|e| panic!("{}: the run fails: {e}", case.name));
        c.bench_function(case.name, |b| {
            b.iter_batched(
                || inputs.clone(),
                |ins| plan.run(ins, &quiet).expect("checked above"),
                criterion::BatchSize::LargeInput,
            )
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = kernels
}
criterion_main!(benches);
