//! A failed run says why as a `RunError` variant a caller can match on,
//! with the same message the shell prints.

use onnx_light::runtime::{Plan, RunError, RunOptions};
use onnx_light::tensor::{Tensor, Value};
use onnx_light::text;
use std::collections::HashMap;

fn plan() -> Plan {
    let m = text::parse_model(
        "<ir_version: 10, opset_import: [\"\" : 18]>\ng (float[1, 4] x, int64[2] s) => (float[2, 2] y)\n{\n  y = Reshape (x, s)\n}",
    )
    .unwrap();
    Plan::new(&m).unwrap()
}

fn run(inputs: Vec<(&str, Tensor)>) -> RunError {
    let given: HashMap<String, Value> = inputs
        .into_iter()
        .map(|(k, t)| (k.to_string(), Value::Tensor(t)))
        .collect();
    match plan().run(given, &RunOptions::default()) {
        Ok(_) => panic!("the run should fail"),
        Err(e) => e,
    }
}

#[test]
fn run_errors_name_their_cause() {
    let x = Tensor::from_vec(&[1, 4], vec![1.0f32; 4]).unwrap();
    let e = run(vec![(
        "x",
        Tensor::from_vec(&[1, 4], vec![1i64; 4]).unwrap(),
    )]);
    match &e {
        RunError::Input { input, problem } => {
            assert_eq!(input, "x");
            assert_eq!(problem, "expects float, got int64");
        }
        other => panic!("expected RunError::Input, got {other:?}"),
    }
    assert_eq!(e.to_string(), "input 'x' expects float, got int64");
    let e = run(vec![("x", x.clone()), ("z", x.clone())]);
    assert!(
        matches!(&e, RunError::NotAnInput { name, .. } if name == "z"),
        "{e:?}"
    );
    // a shape that Reshape cannot take fails in the step, naming the node
    let e = run(vec![
        ("x", x),
        ("s", Tensor::from_vec(&[2], vec![3i64, 3]).unwrap()),
    ]);
    match &e {
        RunError::Execution(k) => assert!(e.to_string().contains("Reshape"), "{k}"),
        other => panic!("expected RunError::Execution, got {other:?}"),
    }
}
