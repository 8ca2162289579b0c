//! Elementwise shape rules through the engine: data propagation through Cast.

use crate::proto::to_proto;
use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use crate::shape::infer_model;
use crate::shape::TypeInfo;
use crate::tensor::{DataType, Tensor};

fn node(op: &str, ins: &[&str], out: &str, attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        attribute: attrs,
        ..Default::default()
    }
}

fn to(dt: DataType) -> AttributeProto {
    AttributeProto {
        name: Some("to".into()),
        i: Some(dt.code() as i64),
        r#type: Some(2),
        ..Default::default()
    }
}

fn input(name: &str, ty: TypeInfo) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ty.to_proto()),
        ..Default::default()
    }
}

#[test]
fn cast_propagates_integer_values_and_types() {
    let shape = Tensor::from_vec(&[2], vec![3i64, 4]).unwrap();
    let x = TypeInfo::tensor(
        DataType::Float,
        Some(vec![Some(crate::expr::Expr::int(12))]),
    );
    let y = TypeInfo::tensor(
        DataType::Float,
        Some(vec![
            Some(crate::expr::Expr::sym("N")),
            Some(crate::expr::Expr::int(4)),
        ]),
    );
    let g = GraphProto {
        node: vec![
            node("Cast", &["s"], "s32", vec![to(DataType::Int32)]),
            node("Cast", &["s32"], "s64", vec![to(DataType::Int64)]),
            node("Reshape", &["x", "s64"], "r", vec![]),
            node("Less", &["y", "r"], "lt", vec![]),
            node("QuantizeLinear", &["y", "sc"], "q", vec![]),
            node("Where", &["lt", "r", "y"], "w", vec![]),
        ],
        initializer: vec![
            to_proto(&shape, "s"),
            to_proto(&Tensor::scalar(0.5f32), "sc"),
        ],
        input: vec![input("x", x), input("y", y)],
        ..Default::default()
    };
    let mut m = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(19),
        }],
        graph: Some(g),
        ..Default::default()
    };
    let rep = infer_model(&mut m);
    let ty = |n: &str| rep.get(n).map(|v| v.ty.display()).unwrap_or_default();
    assert_eq!(ty("s32"), "int32[2]");
    assert_eq!(ty("r"), "float[3,4]");
    assert_eq!(ty("lt"), "bool[3,4]");
    assert_eq!(ty("q"), "uint8[N,4]");
    assert_eq!(ty("w"), "float[3,4]");
}
