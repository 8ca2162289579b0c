//! Inference benchmark: generates a model of about 100,000 nodes (blocks of
//! Relu, Add, Shape, Reshape on `float[N,64]`, with an `If` whose branches
//! read the outer scope every 100 blocks), saves it as `.onnx`, and times
//! `shape::infer_model` on it.
//!
//! `cargo run --release --example bench_infer -- [OUT.onnx] [NODES]`
//! (defaults: /tmp/bench_infer.onnx, 100000). Prints `nodes`, `values` and
//! `seconds` lines.

use onnx_light::expr::Expr;
use onnx_light::proto::attribute_proto::AttributeType;
use onnx_light::proto::to_proto;
use onnx_light::proto::{
    encode_model, AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    ValueInfoProto,
};
use onnx_light::shape::{self, TypeInfo};
use onnx_light::tensor::{DataType, Tensor};
use std::time::Instant;

fn node(op: &str, ins: &[&str], outs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: outs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn vi(name: &str, ty: Option<TypeInfo>) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: ty.map(|t| t.to_proto()),
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

fn branch(name: &str, from: &str) -> GraphProto {
    let out = format!("{name}_out");
    GraphProto {
        name: Some(name.into()),
        node: vec![node("Identity", &[from], &[&out], vec![])],
        output: vec![vi(&out, None)],
        ..Default::default()
    }
}

fn build(n_nodes: usize) -> ModelProto {
    let x_ty = TypeInfo::tensor(
        DataType::Float,
        Some(vec![Some(Expr::sym("N")), Some(Expr::int(64))]),
    );
    let mut nodes = Vec::with_capacity(n_nodes + 8);
    let mut cur = "x".to_string();
    let mut b = 0;
    while nodes.len() + 4 <= n_nodes {
        let (r, a, s, y) = (
            format!("r{b}"),
            format!("a{b}"),
            format!("s{b}"),
            format!("y{b}"),
        );
        nodes.push(node("Relu", &[&cur], &[&r], vec![]));
        nodes.push(node("Add", &[&r, "bias"], &[&a], vec![]));
        nodes.push(node("Shape", &[&a], &[&s], vec![]));
        nodes.push(node("Reshape", &[&a, &s], &[&y], vec![]));
        cur = y;
        if b % 100 == 99 && nodes.len() < n_nodes {
            let f = format!("if{b}");
            nodes.push(node(
                "If",
                &["cond"],
                &[&f],
                vec![
                    graph_attr("then_branch", branch(&format!("then{b}"), &cur)),
                    graph_attr("else_branch", branch(&format!("else{b}"), &cur)),
                ],
            ));
            cur = f;
        }
        b += 1;
    }
    let bias = Tensor::from_vec(&[64], vec![0.5f32; 64]).expect("a tensor");
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(18),
        }],
        graph: Some(GraphProto {
            name: Some("bench".into()),
            node: nodes,
            initializer: vec![to_proto(&bias, "bias")],
            input: vec![
                vi("x", Some(x_ty)),
                vi("cond", Some(TypeInfo::tensor(DataType::Bool, Some(vec![])))),
            ],
            output: vec![vi(&cur, None)],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args
        .first()
        .cloned()
        .unwrap_or_else(|| "/tmp/bench_infer.onnx".into());
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let model = build(n);
    std::fs::write(&out, encode_model(&model)).expect("the model is written");
    let nodes = model.graph.as_ref().map_or(0, |g| g.node.len());
    let mut best = f64::INFINITY;
    let mut values = 0;
    for _ in 0..3 {
        let mut m = model.clone();
        let t = Instant::now();
        let report = shape::infer_model(&mut m);
        best = best.min(t.elapsed().as_secs_f64());
        values = report.values.len();
        let last = report
            .values
            .last()
            .map(|v| v.ty.display())
            .unwrap_or_default();
        assert_eq!(last, "float[N,64]", "the chain keeps its shape");
    }
    println!("model\t{out}");
    println!("nodes\t{nodes}");
    println!("values\t{values}");
    println!("seconds\t{best:.4}");
}
