//! The opset-upgrade pass (`graph::upgrade`): a model written in the old
//! attribute forms (Slice and TopK before 10, Pad and Clip before 11,
//! Squeeze/Unsqueeze/ReduceSum before 13, ReduceMean before 18) infers
//! and runs as the same model written with inputs at opset 18, and the
//! node-local constants the pass makes appear in no listing and no event.

use crate::common::cmds;
use ndarray::{ArrayD, IxDyn};
use onnx_light::runtime::{Plan, RunOptions};
use onnx_light::shape::infer_model;
use onnx_light::tensor::{Tensor, Value};
use onnx_light::text::parse_model;
use std::collections::HashMap;

/// Every moved attribute at least once; Clip gives one bound only and Pad
/// a fill value, so the absent-attribute and float-scalar cases run too.
const OLD: &str = r#"<ir_version: 4, opset_import: ["" : 9]>
old (float[2,6] x) => (float[2,5] y, int64[2,2] i, float[2] m, float[1,2,5] u) {
  s = Slice <starts = [0, 1], ends = [2, 5], axes = [0, 1]> (x)
  v, i = TopK <k = 2> (s)
  p = Pad <pads = [0, 1, 0, 2], value = 7.0> (v)
  y = Clip <max = 6.0> (p)
  m = ReduceMean <axes = [1], keepdims = 0> (y)
  q = Unsqueeze <axes = [0]> (y)
  q2 = Unsqueeze <axes = [0]> (q)
  u = Squeeze <axes = [0]> (q2)
}"#;

const NEW: &str = r#"<ir_version: 8, opset_import: ["" : 18]>
new (float[2,6] x) => (float[2,5] y, int64[2,2] i, float[2] m, float[1,2,5] u)
<int64[2] st = {0, 1}, int64[2] en = {2, 5}, int64[2] ax = {0, 1}, int64[1] k = {2},
 int64[4] pads = {0, 1, 0, 2}, float fill = {7.0}, float hi = {6.0}, int64[1] a1 = {1},
 int64[1] a0 = {0}> {
  s = Slice(x, st, en, ax)
  v, i = TopK(s, k)
  p = Pad(v, pads, fill)
  y = Clip(p, , hi)
  m = ReduceMean <keepdims = 0> (y, a1)
  q = Unsqueeze(y, a0)
  q2 = Unsqueeze(q, a0)
  u = Squeeze(q2, a0)
}"#;

fn x() -> HashMap<String, Value> {
    let v: Vec<f32> = (0..12).map(|i| ((i * 7) % 12) as f32 - 3.0).collect();
    let t = ArrayD::from_shape_vec(IxDyn(&[2, 6]), v).unwrap();
    HashMap::from([("x".to_string(), Value::Tensor(Tensor::F32(t)))])
}

fn run(text: &str) -> Vec<(String, Value)> {
    let m = parse_model(text).unwrap_or_else(|e| panic!("{e}"));
    let plan = Plan::new(&m).unwrap_or_else(|e| panic!("{e}"));
    plan.run(x(), &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .outputs
}

#[test]
fn old_attribute_forms_run_as_the_input_forms() {
    let old = run(OLD);
    let new = run(NEW);
    assert_eq!(old.len(), 4);
    for ((n1, a), (n2, b)) in old.iter().zip(&new) {
        assert_eq!(n1, n2);
        assert_eq!(a, b, "{n1}");
    }
    // top-2 of each row of s is [6, 4] and [7, 5]; the six padded cells
    // hold the fill value 7, and the bound 6 clips them and the 7: both
    // moved floats ran
    let y = old[0].1.as_tensor().unwrap().to_f64_vec().unwrap();
    assert_eq!(y, [6., 6., 4., 6., 6., 6., 6., 5., 6., 6.]);
}

/// Clip-6's absent bounds are the float32 extremes, not "no bound": -inf
/// and +inf come out as f32::MIN and f32::MAX (as onnxruntime gives).
#[test]
fn old_clip_bounds_default_to_the_float_extremes() {
    let m = parse_model(
        r#"<ir_version: 4, opset_import: ["" : 6]> g (float[3] x) => (float[3] y) { y = Clip(x) }"#,
    )
    .unwrap();
    let x = ArrayD::from_shape_vec(IxDyn(&[3]), vec![f32::NEG_INFINITY, 0.5, f32::INFINITY]);
    let ins = HashMap::from([("x".to_string(), Value::Tensor(Tensor::F32(x.unwrap())))]);
    let out = Plan::new(&m)
        .unwrap()
        .run(ins, &RunOptions::default())
        .unwrap()
        .outputs;
    let y = out[0].1.as_tensor().unwrap().to_f64_vec().unwrap();
    assert_eq!(y, [f32::MIN as f64, 0.5, f32::MAX as f64]);
}

#[test]
fn old_attribute_forms_infer_as_the_input_forms() {
    let mut old = parse_model(OLD).unwrap();
    let mut new = parse_model(NEW).unwrap();
    let (ro, rn) = (infer_model(&mut old), infer_model(&mut new));
    assert!(ro.warnings.is_empty(), "{:?}", ro.warnings);
    for name in ["s", "v", "i", "p", "y", "m", "q", "u"] {
        let t = |r: &onnx_light::shape::InferReport| r.get(name).map(|v| v.ty.display());
        assert_eq!(t(&ro), t(&rn), "{name}");
        assert!(t(&ro).is_some(), "{name}");
    }
    assert_eq!(ro.get("p").unwrap().ty.display(), "float[2,5]");
    for v in &ro.values {
        assert!(
            !v.name.contains('\0'),
            "a node-local constant is listed: {v:?}"
        );
    }
}

#[test]
fn node_local_constants_appear_in_no_listing_or_event() {
    let script = format!(
        "parse {}; infer; run x=arange(12).reshape(2,6); events; show",
        OLD
    );
    let o = cmds(&script);
    let (out, err) = (&o.stdout, &o.stderr);
    assert_eq!(o.code, 0, "{out}\n{err}");
    assert!(out.contains("run_node"), "{out}");
    for text in [out, err] {
        assert!(!text.contains("local:"), "{text}");
        assert!(!text.contains('\0'), "{text}");
    }
}

/// A version the table does not cover is refused by name: an operator
/// older models cannot have, and an opset newer than the standard's.
#[test]
fn an_unsupported_version_is_refused_by_name() {
    let o = cmds(
        r#"parse <ir_version: 8, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Gelu(x) }; infer; run x=[1,2]"#,
    );
    let want = "node 0 (Gelu): operator 'Gelu' of domain 'ai.onnx' first appears in opset 20; the model imports opset 18";
    assert!(o.stderr.contains(want), "{}", o.stderr);
    assert!(o.stderr.contains(&format!("error: {want}")), "{}", o.stderr);
    let o = cmds(
        r#"parse <ir_version: 8, opset_import: ["" : 29]> g (float[2] x) => (float[2] y) { y = Relu(x) }; run x=[1,2]"#,
    );
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains("node 0 (Relu): operator 'Relu': the model imports opset 29 of domain 'ai.onnx', newer than 28, the newest onnx-light knows"),
        "{}",
        o.stderr
    );
}
