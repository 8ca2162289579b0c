//! The random operators whose backend cases are skipped (their expected
//! values are numpy draws) are checked here by their statistics instead:
//! Dropout in training mode and Bernoulli on large inputs, and the
//! backend runner's own draw checks (`runtime::random_draws::check`)
//! accept their outputs and refuse tampered ones.

use ndarray::{ArrayD, IxDyn};
use onnx_light::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use onnx_light::runtime::random_draws::check;
use onnx_light::runtime::tolerance::Tolerance;
use onnx_light::runtime::{Plan, RunOptions};
use onnx_light::tensor::{Tensor, Value};
use std::collections::HashMap;

fn vi(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        ..Default::default()
    }
}

fn one_node_model(node: NodeProto, inputs: &[&str], outputs: &[&str]) -> ModelProto {
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(15),
        }],
        graph: Some(GraphProto {
            name: Some("g".into()),
            node: vec![node],
            input: inputs.iter().map(|n| vi(n)).collect(),
            output: outputs.iter().map(|n| vi(n)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn run(model: &ModelProto, feed: &HashMap<String, Value>) -> Vec<(String, Value)> {
    let plan = Plan::new(model).expect("the model plans");
    let opts = RunOptions {
        events: false,
        release: true,
        max_values: 0,
        ..Default::default()
    };
    plan.run(feed.clone(), &opts)
        .expect("the model runs")
        .outputs
}

fn f32s(v: &Value) -> Vec<f32> {
    match v {
        Value::Tensor(Tensor::F32(a)) => a.iter().copied().collect(),
        other => panic!("expected a float tensor, got {}", other.describe()),
    }
}

fn bools(v: &Value) -> Vec<bool> {
    match v {
        Value::Tensor(Tensor::Bool(a)) => a.iter().copied().collect(),
        other => panic!("expected a bool tensor, got {}", other.describe()),
    }
}

fn dropout_case(n: usize, ratio: f32) -> (ModelProto, HashMap<String, Value>) {
    let node = NodeProto {
        op_type: Some("Dropout".into()),
        input: vec!["x".into(), "r".into(), "t".into()],
        output: vec!["y".into(), "z".into()],
        ..Default::default()
    };
    let model = one_node_model(node, &["x", "r", "t"], &["y", "z"]);
    // nonzero inputs, so a dropped element is told apart from a kept one
    let x: Vec<f32> = (0..n).map(|i| 1.0 + (i % 97) as f32 / 10.0).collect();
    let mut feed = HashMap::new();
    feed.insert(
        "x".to_string(),
        Value::Tensor(Tensor::F32(ArrayD::from_shape_vec(IxDyn(&[n]), x).unwrap())),
    );
    feed.insert(
        "r".to_string(),
        Value::Tensor(Tensor::F32(ArrayD::from_elem(IxDyn(&[]), ratio))),
    );
    feed.insert(
        "t".to_string(),
        Value::Tensor(Tensor::Bool(ArrayD::from_elem(IxDyn(&[]), true))),
    );
    (model, feed)
}

#[test]
fn training_dropout_drops_the_ratio_and_scales_the_rest() {
    let n = 20_000;
    for ratio in [0.1f32, 0.5, 0.75] {
        let (model, feed) = dropout_case(n, ratio);
        let out = run(&model, &feed);
        let x = f32s(&feed["x"]);
        let y = f32s(&out[0].1);
        let z = bools(&out[1].1);
        let scale = 1.0 / (1.0 - ratio);
        let mut dropped = 0usize;
        for i in 0..n {
            if z[i] {
                assert!((y[i] - x[i] * scale).abs() <= 1e-5 * (x[i] * scale).abs());
            } else {
                assert_eq!(y[i], 0.0);
                dropped += 1;
            }
        }
        let want = ratio as f64 * n as f64;
        let sd = (n as f64 * ratio as f64 * (1.0 - ratio as f64)).sqrt();
        assert!(
            (dropped as f64 - want).abs() <= 4.0 * sd,
            "ratio {ratio}: {dropped} dropped of {n}, expected about {want}"
        );
        // the runner's checks accept it (its outputs serve as the expected
        // type and shape)
        let graph = model.graph.as_ref().unwrap();
        let want_outs: Vec<Option<Value>> = out.iter().map(|(_, v)| Some(v.clone())).collect();
        let tol = Tolerance::default();
        let what = check(graph, &feed, &out, &want_outs, &tol).expect("the draws check");
        assert!(what.contains("dropped"), "{what}");
    }
}

#[test]
fn draw_checks_refuse_wrong_dropout_outputs() {
    let n = 2_000;
    let (model, feed) = dropout_case(n, 0.5);
    let graph = model.graph.as_ref().unwrap();
    let out = run(&model, &feed);
    let want: Vec<Option<Value>> = out.iter().map(|(_, v)| Some(v.clone())).collect();
    let tol = Tolerance::default();
    let x = f32s(&feed["x"]);
    let z = bools(&out[1].1);
    let tensor_f =
        |v: Vec<f32>| Value::Tensor(Tensor::F32(ArrayD::from_shape_vec(IxDyn(&[n]), v).unwrap()));
    let tensor_b = |v: Vec<bool>| {
        Value::Tensor(Tensor::Bool(
            ArrayD::from_shape_vec(IxDyn(&[n]), v).unwrap(),
        ))
    };

    // kept values not scaled by 1 / (1 - ratio)
    let unscaled: Vec<f32> = (0..n).map(|i| if z[i] { x[i] } else { 0.0 }).collect();
    let bad = vec![("y".to_string(), tensor_f(unscaled)), out[1].clone()];
    assert!(check(graph, &feed, &bad, &want, &tol).is_err());

    // a mask that disagrees with the output
    let flipped: Vec<bool> = z.iter().map(|b| !b).collect();
    let bad = vec![out[0].clone(), ("z".to_string(), tensor_b(flipped))];
    assert!(check(graph, &feed, &bad, &want, &tol).is_err());

    // everything dropped: consistent, but far from the ratio
    let bad = vec![
        ("y".to_string(), tensor_f(vec![0.0; n])),
        ("z".to_string(), tensor_b(vec![false; n])),
    ];
    let e = check(graph, &feed, &bad, &want, &tol).unwrap_err();
    assert!(e.contains("dropped"), "{e}");

    // a wrong shape
    let short = Value::Tensor(Tensor::F32(ArrayD::from_elem(IxDyn(&[n - 1]), 0.0)));
    let bad = vec![("y".to_string(), short), out[1].clone()];
    let e = check(graph, &feed, &bad, &want, &tol).unwrap_err();
    assert!(e.contains("shape"), "{e}");
}

#[test]
fn bernoulli_draws_follow_the_probabilities() {
    let n = 20_000;
    let node = NodeProto {
        op_type: Some("Bernoulli".into()),
        input: vec!["p".into()],
        output: vec!["y".into()],
        attribute: vec![AttributeProto {
            name: Some("seed".into()),
            r#type: Some(1),
            f: Some(3.0),
            ..Default::default()
        }],
        ..Default::default()
    };
    let model = one_node_model(node, &["p"], &["y"]);
    let p: Vec<f32> = (0..n).map(|i| (i % 101) as f32 / 100.0).collect();
    let mut feed = HashMap::new();
    feed.insert(
        "p".to_string(),
        Value::Tensor(Tensor::F32(
            ArrayD::from_shape_vec(IxDyn(&[n]), p.clone()).unwrap(),
        )),
    );
    let out = run(&model, &feed);
    let y = f32s(&out[0].1);
    assert!(y.iter().all(|&v| v == 0.0 || v == 1.0));
    // probability 0 never draws 1, probability 1 always does
    for i in 0..n {
        if p[i] == 0.0 {
            assert_eq!(y[i], 0.0);
        }
        if p[i] == 1.0 {
            assert_eq!(y[i], 1.0);
        }
    }
    let ones: f64 = y.iter().map(|&v| v as f64).sum();
    let mean: f64 = p.iter().map(|&q| q as f64).sum();
    let sd: f64 = p
        .iter()
        .map(|&q| (q * (1.0 - q)) as f64)
        .sum::<f64>()
        .sqrt();
    assert!(
        (ones - mean).abs() <= 4.0 * sd,
        "{ones} ones, expected about {mean}"
    );
    // the same seed draws the same values
    assert_eq!(f32s(&run(&model, &feed)[0].1), y);

    let graph = model.graph.as_ref().unwrap();
    let want: Vec<Option<Value>> = out.iter().map(|(_, v)| Some(v.clone())).collect();
    let tol = Tolerance::default();
    check(graph, &feed, &out, &want, &tol).expect("the draws check");
    // all ones: values in {0, 1} but far too many
    let all = Value::Tensor(Tensor::F32(ArrayD::from_elem(IxDyn(&[n]), 1.0)));
    let e = check(graph, &feed, &[("y".to_string(), all)], &want, &tol).unwrap_err();
    assert!(e.contains("ones"), "{e}");
    // a value that is no draw of 0 or 1
    let mut half = y.clone();
    half[5] = 0.5;
    let half = Value::Tensor(Tensor::F32(
        ArrayD::from_shape_vec(IxDyn(&[n]), half).unwrap(),
    ));
    assert!(check(graph, &feed, &[("y".to_string(), half)], &want, &tol).is_err());
}
