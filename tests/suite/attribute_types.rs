//! An attribute of another type than its operator reads (a hand-written
//! `kernel_shape = [2.0, 2.0]`, a converter writing an INT where a FLOAT
//! belongs) is refused naming the node, the attribute, the type expected and
//! the type found: by the plan as an error, by inference as a warning when
//! the shape rule reads that attribute. It used to read as a default (0) and
//! run with it.

use onnx_light::runtime::Plan;
use onnx_light::shape::infer_model;
use onnx_light::text;

fn model(node: &str) -> String {
    format!(
        "<ir_version: 10, opset_import: [\"\" : 18]>\ng (float[1, 1, 4, 4] x) => (float[1, 1, 2, 2] y)\n{{\n  {node}\n}}"
    )
}

#[test]
fn a_mistyped_attribute_is_refused_by_the_plan_and_reported_by_inference() {
    let cases = [
        (
            "y = MaxPool <kernel_shape = [2.0, 2.0], strides = [2, 2]> (x)",
            "node 0 (MaxPool): attribute 'kernel_shape' must be INTS, got FLOATS",
        ),
        (
            "y = MaxPool <kernel_shape = [2, 2], strides = 2> (x)",
            "node 0 (MaxPool): attribute 'strides' must be INTS, got INT",
        ),
        (
            "t = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (x)\n  y = LeakyRelu <alpha = 1> (t)",
            "node 1 (LeakyRelu): attribute 'alpha' must be FLOAT, got INT",
        ),
    ];
    for (i, (node, want)) in cases.into_iter().enumerate() {
        let m = text::parse_model(&model(node)).unwrap();
        let e = Plan::new(&m)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(want), "{node}: plan said '{e}'");
        if i == 2 {
            // LeakyRelu's shape rule does not read alpha
            continue;
        }
        let mut m = m;
        let report = infer_model(&mut m);
        assert!(
            report.warnings.iter().any(|w| w.contains(want)),
            "{node}: inference said {:?}",
            report.warnings
        );
    }
}

#[test]
fn well_typed_attributes_plan_and_infer_without_warnings() {
    let m = text::parse_model(&model(
        "y = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (x)",
    ))
    .unwrap();
    assert!(Plan::new(&m).is_ok());
    let mut m = m;
    assert!(infer_model(&mut m).warnings.is_empty());
}

#[test]
fn plan_errors_are_matchable_with_their_cause_as_source() {
    use onnx_light::runtime::PlanError;
    use std::error::Error;
    let m = text::parse_model(&model(
        "y = MaxPool <kernel_shape = [2.0, 2.0], strides = [2, 2]> (x)",
    ))
    .unwrap();
    match Plan::new(&m).err() {
        Some(e @ PlanError::Attribute { .. }) => {
            let PlanError::Attribute {
                node,
                op_type,
                source,
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(
                (node.as_str(), op_type.as_str()),
                ("node 0 (MaxPool)", "MaxPool")
            );
            assert_eq!(source.name, "kernel_shape");
            let cause = e.source().map(|s| s.to_string()).unwrap_or_default();
            assert_eq!(cause, "attribute 'kernel_shape' must be INTS, got FLOATS");
        }
        other => panic!("expected PlanError::Attribute, got {other:?}"),
    }
    let m = text::parse_model(&model("y = NoSuchOp (x)")).unwrap();
    match Plan::new(&m).err() {
        Some(PlanError::Unsupported {
            node,
            source: onnx_light::ops::Unsupported::Unknown { op_type, domain },
        }) => {
            assert_eq!(
                (node.as_str(), op_type.as_str(), domain.as_str()),
                ("node 0 (NoSuchOp)", "NoSuchOp", "")
            )
        }
        other => panic!("expected PlanError::Unsupported, got {other:?}"),
    }
    let m = text::parse_model(&model("y = Celu <alpha = 0.0> (x)")).unwrap();
    match Plan::new(&m).err() {
        Some(e @ PlanError::Kernel { .. }) => assert!(e.source().is_some(), "{e}"),
        other => panic!("expected PlanError::Kernel, got {other:?}"),
    }
}
