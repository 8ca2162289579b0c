//! Neural-network shape rules through the engine: convolution, pooling, Gemm sizes.

use crate::expr::Expr;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use crate::shape::{infer_model, TypeInfo};
use crate::tensor::DataType;

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

fn string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    }
}

fn input(name: &str, dims: &[&str]) -> ValueInfoProto {
    let shape = dims
        .iter()
        .map(|d| {
            Some(
                d.parse::<i64>()
                    .map(Expr::int)
                    .unwrap_or_else(|_| Expr::sym(d)),
            )
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeInfo::tensor(DataType::Float, Some(shape)).to_proto()),
        ..Default::default()
    }
}

/// Infers one node over float inputs of the given shapes; the displayed
/// type of its first output.
fn infer(op: &str, inputs: &[&[&str]], attrs: Vec<AttributeProto>) -> String {
    let names: Vec<String> = (0..inputs.len()).map(|i| format!("i{i}")).collect();
    let mut m = ModelProto {
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(18),
        }],
        graph: Some(GraphProto {
            input: names.iter().zip(inputs).map(|(n, d)| input(n, d)).collect(),
            node: vec![NodeProto {
                op_type: Some(op.into()),
                input: names.clone(),
                output: vec!["Y".into()],
                attribute: attrs,
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let rep = infer_model(&mut m);
    rep.get("Y").map(|v| v.ty.display()).unwrap_or_default()
}

#[test]
fn conv_and_pool_sizes() {
    // 7x7 stride 2 pad 3 over 224: (224 + 6 - 7) // 2 + 1 = 112
    let t = infer(
        "Conv",
        &[&["N", "3", "224", "224"], &["64", "3", "7", "7"]],
        vec![ints("strides", &[2, 2]), ints("pads", &[3, 3, 3, 3])],
    );
    assert_eq!(t, "float[N,64,112,112]");
    // a symbolic height keeps the formula; SAME gives CeilToInt(W, 2)
    let sym = infer(
        "Conv",
        &[&["1", "3", "H", "W"], &["8", "3", "3", "3"]],
        vec![ints("strides", &[1, 2]), string("auto_pad", "SAME_UPPER")],
    );
    let (h, w) = (Expr::sym("H"), Expr::sym("W"));
    let want = format!(
        "float[1,8,{},{}]",
        h.ceil_div(&Expr::int(1)),
        w.ceil_div(&Expr::int(2))
    );
    assert_eq!(sym, want);
    // ceil_mode: (5 - 2) / 2 rounded up + 1 = 3 (floor would give 2)
    let floor = infer(
        "MaxPool",
        &[&["1", "1", "5", "5"]],
        vec![ints("kernel_shape", &[2, 2]), ints("strides", &[2, 2])],
    );
    assert_eq!(floor, "float[1,1,2,2]");
    let ceil = infer(
        "MaxPool",
        &[&["1", "1", "5", "5"]],
        vec![
            ints("kernel_shape", &[2, 2]),
            ints("strides", &[2, 2]),
            int("ceil_mode", 1),
        ],
    );
    assert_eq!(ceil, "float[1,1,3,3]");
    assert_eq!(
        infer("GlobalAveragePool", &[&["N", "C", "H", "W"]], vec![]),
        "float[N,C,1,1]"
    );
}

#[test]
fn conv_transpose_and_gemm() {
    // stride 3: 3 * (3 - 1) + 3 = 9
    let t = infer(
        "ConvTranspose",
        &[&["1", "1", "3", "3"], &["1", "2", "3", "3"]],
        vec![ints("strides", &[3, 2])],
    );
    assert_eq!(t, "float[1,2,9,7]");
    let g = infer(
        "Gemm",
        &[&["K", "M"], &["N", "K"]],
        vec![int("transA", 1), int("transB", 1)],
    );
    assert_eq!(g, "float[M,N]");
}
