//! A copy of a real model with one Conv weight initializer scaled, so that
//! exactly one node (the Conv reading it) computes something else: the
//! ground truth for `compare`.

use onnx_light::proto::{encode_model, load_model};
use onnx_light::proto::{from_proto, to_proto};
use onnx_light::tensor::Tensor;
use std::collections::HashMap;
use std::path::Path;

/// What was changed.
pub struct ScaledConv {
    /// The initializer scaled.
    pub weight: String,
    /// The index (in the graph) of the Conv reading it.
    pub node_index: usize,
    /// The Conv's output.
    pub output: String,
}

/// Writes `src` to `dst` with the weight of the `nth` (0-based) Conv whose
/// weight is a float initializer read by that Conv alone multiplied by
/// `factor`. Panics (a test helper) when the model has no such Conv.
pub fn write_scaled_conv_weight(src: &Path, dst: &Path, nth: usize, factor: f32) -> ScaledConv {
    let mut m = load_model(src).expect("the model loads");
    let g = m.graph.as_mut().expect("the model has a graph");
    let inits: HashMap<String, usize> = g
        .initializer
        .iter()
        .enumerate()
        .map(|(k, t)| (t.name().to_string(), k))
        .collect();
    let mut readers: HashMap<&str, usize> = HashMap::new();
    for n in &g.node {
        for i in &n.input {
            *readers.entry(i.as_str()).or_default() += 1;
        }
    }
    let (node_index, weight, output) = g
        .node
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            n.op_type() == "Conv"
                && n.input.len() > 1
                && inits.contains_key(&n.input[1])
                && readers.get(n.input[1].as_str()) == Some(&1)
        })
        .map(|(i, n)| (i, n.input[1].clone(), n.output[0].clone()))
        .nth(nth)
        .expect("the model has enough Conv nodes with their own weight initializer");
    let k = inits[&weight];
    let t = from_proto(&g.initializer[k]).expect("the weight decodes");
    let Tensor::F32(a) = t else {
        panic!("the weight '{weight}' is not float32");
    };
    g.initializer[k] = to_proto(&Tensor::F32(a.mapv(|x| x * factor)), &weight);
    std::fs::write(dst, encode_model(&m)).expect("the copy is written");
    ScaledConv {
        weight,
        node_index,
        output,
    }
}
