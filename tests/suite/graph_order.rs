//! Graphs whose nodes are not written in topological order (some converters
//! emit them so): shape inference and the plan both follow the order of the
//! dependencies (`graph::Schedule`), so every value is inferred and the run
//! gives the same outputs as the sorted graph; a cycle is refused naming a
//! node.

use ndarray::{ArrayD, IxDyn};
use onnx_light::runtime::{EventAction, Plan, RunOptions};
use onnx_light::shape::{infer_model, Source};
use onnx_light::tensor::{Tensor, Value};
use onnx_light::text;
use std::collections::HashMap;

/// `y = Neg(Relu(x))` with undeclared intermediates and output shape,
/// written last node first when `reversed`.
fn model(reversed: bool) -> String {
    let mut nodes = ["a = Relu(x)", "b = Mul(a, a)", "y = Neg(b)"];
    if reversed {
        nodes.reverse();
    }
    format!(
        "<ir_version: 10, opset_import: [\"\" : 18]>\ng (float[N, 3] x) => (float y)\n{{\n  {}\n}}",
        nodes.join("\n  ")
    )
}

#[test]
fn unsorted_nodes_are_inferred_in_dependency_order() {
    for reversed in [false, true] {
        let mut m = text::parse_model(&model(reversed)).unwrap();
        let report = infer_model(&mut m);
        for name in ["a", "b"] {
            let v = report.get(name).unwrap();
            assert_eq!(v.ty.display(), "float[N,3]", "{name} (reversed {reversed})");
            assert_eq!(v.source, Source::Inferred);
        }
        assert_eq!(report.get("y").unwrap().ty.display(), "float[N,3]");
    }
}

#[test]
fn unsorted_nodes_run_in_dependency_order() {
    let x =
        ArrayD::from_shape_vec(IxDyn(&[2, 3]), vec![1.0f32, -2.0, 3.0, 0.5, -0.5, 2.0]).unwrap();
    let mut outs = vec![];
    for reversed in [false, true] {
        let plan = Plan::new(&text::parse_model(&model(reversed)).unwrap()).unwrap();
        let inputs = HashMap::from([("x".to_string(), Value::Tensor(Tensor::F32(x.clone())))]);
        let opts = RunOptions {
            events: true,
            ..Default::default()
        };
        let r = plan.run(inputs, &opts).unwrap();
        let ran: Vec<String> = r
            .events
            .iter()
            .filter(|e| e.action == EventAction::RunNode)
            .map(|e| e.name.clone())
            .collect();
        assert_eq!(ran.len(), 3);
        outs.push(format!("{:?}", r.outputs));
    }
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn a_cycle_is_refused_naming_a_node() {
    let text = "<ir_version: 10, opset_import: [\"\" : 18]>\ng (float[2] x) => (float[2] y)\n{\n  a = Add(x, b)\n  b = Neg(a)\n  y = Identity(b)\n}";
    let e = Plan::new(&text::parse_model(text).unwrap()).err().unwrap();
    assert!(
        e.to_string()
            .contains("the graph has a cycle: node 0 (Add) cannot run"),
        "{e}"
    );
    // inference still reports every value (the cycle's values unknown)
    let mut m = text::parse_model(text).unwrap();
    assert!(infer_model(&mut m).get("a").is_some());
}
