//! Loop, If and Scan (kernels in `ops/kernels/control.rs`) run by the plan:
//! subgraphs reading enclosing scopes, and loop-invariant steps computed once.

mod loops_and_branches {
    use crate::tensor::{Tensor, Value};

    use crate::proto::attribute_proto::AttributeType;
    use crate::proto::{
        AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
    };
    use crate::runtime::{Plan, RunOptions};
    use std::collections::HashMap;

    fn node(op: &str, ins: &[&str], outs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: ins.iter().map(|s| s.to_string()).collect(),
            output: outs.iter().map(|s| s.to_string()).collect(),
            attribute: attrs,
            ..Default::default()
        }
    }

    fn vi(name: &str) -> ValueInfoProto {
        ValueInfoProto {
            name: Some(name.into()),
            ..Default::default()
        }
    }

    fn graph_attr(name: &str, g: GraphProto) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(AttributeType::Graph as i32),
            g: Some(g),
            ..Default::default()
        }
    }

    fn model(nodes: Vec<NodeProto>, ins: &[&str], outs: &[&str]) -> ModelProto {
        ModelProto {
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(13),
            }],
            graph: Some(GraphProto {
                node: nodes,
                input: ins.iter().map(|s| vi(s)).collect(),
                output: outs.iter().map(|s| vi(s)).collect(),
                initializer: vec![crate::proto::to_proto(&Tensor::scalar(1.0f32), "one")],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn run(m: &ModelProto, ins: Vec<(&str, Tensor)>) -> Vec<Value> {
        let plan = Plan::new(m).unwrap();
        let inputs: HashMap<String, Value> = ins
            .into_iter()
            .map(|(n, t)| (n.to_string(), Value::Tensor(t)))
            .collect();
        let r = plan.run(inputs, &RunOptions::default()).unwrap();
        r.outputs.into_iter().map(|(_, v)| v).collect()
    }

    fn loop_model() -> ModelProto {
        let body = GraphProto {
            node: vec![
                node("Add", &["x_in", "one"], &["x_out"], vec![]),
                node("Identity", &["c_in"], &["c_out"], vec![]),
                node("Identity", &["x_out"], &["scan"], vec![]),
            ],
            input: vec![vi("i"), vi("c_in"), vi("x_in")],
            output: vec![vi("c_out"), vi("x_out"), vi("scan")],
            ..Default::default()
        };
        model(
            vec![node(
                "Loop",
                &["M", "cond", "x"],
                &["x_final", "xs"],
                vec![graph_attr("body", body)],
            )],
            &["M", "cond", "x"],
            &["x_final", "xs"],
        )
    }

    #[test]
    fn loop_runs_m_times_with_outer_scope() {
        let out = run(
            &loop_model(),
            vec![
                ("M", Tensor::scalar(3i64)),
                ("cond", Tensor::scalar(true)),
                ("x", Tensor::from_vec(&[1], vec![10.0f32]).unwrap()),
            ],
        );
        assert_eq!(
            out[0].as_tensor().unwrap().to_f64_vec().unwrap(),
            vec![13.0]
        );
        let xs = out[1].as_tensor().unwrap();
        assert_eq!(xs.shape(), &[3, 1]);
        assert_eq!(xs.to_f64_vec().unwrap(), vec![11.0, 12.0, 13.0]);
    }

    #[test]
    fn loop_with_false_cond_runs_zero_times() {
        let out = run(
            &loop_model(),
            vec![
                ("M", Tensor::scalar(3i64)),
                ("cond", Tensor::scalar(false)),
                ("x", Tensor::from_vec(&[1], vec![10.0f32]).unwrap()),
            ],
        );
        assert_eq!(
            out[0].as_tensor().unwrap().to_f64_vec().unwrap(),
            vec![10.0]
        );
        assert_eq!(out[1].as_tensor().unwrap().shape()[0], 0);
    }

    #[test]
    fn if_picks_a_branch() {
        let then_b = GraphProto {
            node: vec![node("Identity", &["x"], &["y_then"], vec![])],
            output: vec![vi("y_then")],
            ..Default::default()
        };
        let else_b = GraphProto {
            node: vec![node("Add", &["x", "one"], &["y_else"], vec![])],
            output: vec![vi("y_else")],
            ..Default::default()
        };
        let m = model(
            vec![node(
                "If",
                &["c"],
                &["y"],
                vec![
                    graph_attr("then_branch", then_b),
                    graph_attr("else_branch", else_b),
                ],
            )],
            &["c", "x"],
            &["y"],
        );
        let x = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        let t = run(&m, vec![("c", Tensor::scalar(true)), ("x", x.clone())]);
        assert_eq!(
            t[0].as_tensor().unwrap().to_f64_vec().unwrap(),
            vec![1.0, 2.0]
        );
        let e = run(&m, vec![("c", Tensor::scalar(false)), ("x", x)]);
        assert_eq!(
            e[0].as_tensor().unwrap().to_f64_vec().unwrap(),
            vec![2.0, 3.0]
        );
    }
}

mod hoisting {
    use crate::runtime::{Plan, RunOptions};
    use crate::tensor::{Tensor, Value};
    use std::collections::HashMap;

    /// A Loop whose body passes `w` through unchanged (as Paddle2ONNX passes
    /// weights) and transposes it, multiplies by a constant and adds an
    /// outer-scope value on every iteration: those steps are invariant; the
    /// MatMul with the accumulator is not.
    const MODEL: &str = r#"<ir_version: 10, opset_import: ["" : 18]>
g (int64 trip, bool cond, float[2,2] acc0, float[2,3] w0, float[3,2] bias) => (float[2,2] acc_final, float[2,3] w_final, float[K,3,2] wts)
{
  acc_final, w_final, wts = Loop (trip, cond, acc0, w0) <body = body (int64 i, bool c, float[2,2] acc, float[2,3] w) => (bool c_out, float[2,2] acc_out, float[2,3] w, float[3,2] wt2) {
      c_out = Identity(c)
      two = Constant <value = float {2.0}> ()
      wt = Transpose <perm = [1, 0]> (w)
      wt_scaled = Mul(wt, two)
      wt2 = Add(wt_scaled, bias)
      prod = MatMul(acc, w)
      fi = Cast <to = 1> (i)
      shifted = Add(prod, fi)
      acc_out = MatMul(shifted, wt2)
    }>
}"#;

    /// Options of an unobserved run, the only kind that hoists.
    fn quiet() -> RunOptions {
        RunOptions {
            events: false,
            release: true,
            ..RunOptions::default()
        }
    }

    /// The model with `from` replaced by `to` (a body variant), planned.
    fn variant_plan(edits: &[(&str, &str)]) -> Plan {
        let mut text = MODEL.to_string();
        for (from, to) in edits {
            text = text.replace(from, to);
        }
        Plan::new(&crate::text::parse_model(&text).unwrap()).unwrap()
    }

    fn inputs() -> HashMap<String, Value> {
        let t = |shape: &[usize], v: Vec<f32>| Value::Tensor(Tensor::from_vec(shape, v).unwrap());
        HashMap::from([
            ("trip".to_string(), Value::Tensor(Tensor::scalar(3i64))),
            ("cond".to_string(), Value::Tensor(Tensor::scalar(true))),
            ("acc0".to_string(), t(&[2, 2], vec![0.5, -1.0, 0.25, 2.0])),
            (
                "w0".to_string(),
                t(&[2, 3], vec![1.0, 0.5, -0.5, 2.0, 0.0, 1.5]),
            ),
            (
                "bias".to_string(),
                t(&[3, 2], vec![0.1, 0.2, 0.3, -0.4, 0.5, 0.6]),
            ),
        ])
    }

    #[test]
    fn loop_invariant_steps_are_computed_once_with_the_same_result() {
        let model = crate::text::parse_model(MODEL).unwrap();
        let plan = Plan::new(&model).unwrap();
        // with events: every step runs on every iteration, nothing hoisted
        let before = crate::ops::control::loop_op::hoisted_steps();
        let observed = plan.run(inputs(), &RunOptions::default()).unwrap();
        assert_eq!(crate::ops::control::loop_op::hoisted_steps(), before);
        let transposes = observed
            .events
            .iter()
            .filter(|e| e.node.as_ref().is_some_and(|n| n.op_type == "Transpose"))
            .count();
        assert_eq!(
            transposes, 3,
            "the event log reports each iteration's Transpose"
        );
        // without events: Constant, Transpose, Mul and Add(bias) once per run
        let quiet = quiet();
        let fast = plan.run(inputs(), &quiet).unwrap();
        assert_eq!(crate::ops::control::loop_op::hoisted_steps(), before + 4);
        assert_eq!(observed.outputs.len(), 3);
        for ((n1, v1), (n2, v2)) in observed.outputs.iter().zip(&fast.outputs) {
            assert_eq!(n1, n2);
            assert_eq!(v1, v2, "output '{n1}' differs with hoisting");
        }
        let acc = fast.outputs[0].1.as_tensor().unwrap().to_f64_vec().unwrap();
        assert!(acc.iter().all(|x| x.is_finite()) && acc.iter().any(|&x| x != 0.0));
        // the scan output stacks the hoisted value once per iteration
        assert_eq!(fast.outputs[2].1.as_tensor().unwrap().shape(), &[3, 3, 2]);
        // a second quiet run computes the hoisted steps again, once
        let again = plan.run(inputs(), &quiet).unwrap();
        assert_eq!(crate::ops::control::loop_op::hoisted_steps(), before + 8);
        assert_eq!(again.outputs[0].1, fast.outputs[0].1);
    }

    #[test]
    fn a_carried_value_passed_on_through_no_op_steps_is_invariant() {
        // Paddle2ONNX's form: w_out = Squeeze(Add(Unsqueeze(w, [0]), 0), [0])
        let plan = variant_plan(&[
            (
                "(bool c_out, float[2,2] acc_out, float[2,3] w, float[3,2] wt2)",
                "(bool c_out, float[2,2] acc_out, float[2,3] w_out, float[3,2] wt2)",
            ),
            (
                "c_out = Identity(c)",
                "c_out = Identity(c)
      ax = Constant <value = int64[1] {0}> ()
      zero = Constant <value = float[1] {0}> ()
      wu = Unsqueeze(w, ax)
      wz = Add(wu, zero)
      w_out = Squeeze(wz, ax)",
            ),
        ]);
        let quiet = quiet();
        let before = crate::ops::control::loop_op::hoisted_steps();
        let fast = plan.run(inputs(), &quiet).unwrap();
        // the four invariant steps and the five of the no-op chain
        assert_eq!(crate::ops::control::loop_op::hoisted_steps(), before + 9);
        let observed = plan.run(inputs(), &RunOptions::default()).unwrap();
        for ((n1, v1), (n2, v2)) in observed.outputs.iter().zip(&fast.outputs) {
            assert_eq!(n1, n2);
            assert_eq!(v1, v2, "output '{n1}' differs with hoisting");
        }
    }

    #[test]
    fn a_carried_value_the_body_changes_is_not_invariant() {
        // the same body but w is replaced by its negation each iteration
        let plan = variant_plan(&[
            (
                "(bool c_out, float[2,2] acc_out, float[2,3] w, float[3,2] wt2)",
                "(bool c_out, float[2,2] acc_out, float[2,3] w_next, float[3,2] wt2)",
            ),
            (
                "c_out = Identity(c)",
                "c_out = Identity(c)\n      w_next = Neg(w)",
            ),
        ]);
        let quiet = quiet();
        let before = crate::ops::control::loop_op::hoisted_steps();
        let fast = plan.run(inputs(), &quiet).unwrap();
        // only the Constant is hoisted
        assert_eq!(crate::ops::control::loop_op::hoisted_steps(), before + 1);
        let observed = plan.run(inputs(), &RunOptions::default()).unwrap();
        assert_eq!(observed.outputs[0].1, fast.outputs[0].1);
        assert_eq!(observed.outputs[2].1, fast.outputs[2].1);
        // the sign of w alternates, so the stacked transposes differ per step
        let wts = fast.outputs[2].1.as_tensor().unwrap().to_f64_vec().unwrap();
        assert_ne!(wts[..6], wts[6..12]);
    }
}
