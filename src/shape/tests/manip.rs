//! Manipulation shape rules through the engine: shape data propagation,
//! data-dependent sizes, reductions, and no panic on odd inputs.

use crate::expr::Expr;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::to_proto;
use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use crate::shape::{infer_model, TypeInfo};
use crate::tensor::{DataType, Tensor};

fn node(op: &str, ins: &[&str], outs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: outs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn ints_attr(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
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

fn int_init(name: &str, shape: &[usize], v: Vec<i64>) -> crate::proto::TensorProto {
    to_proto(&Tensor::from_vec(shape, v).unwrap(), name)
}

/// Infers a one-input model and returns the displayed type of `out`.
fn infer(
    x: &[&str],
    inits: Vec<crate::proto::TensorProto>,
    nodes: Vec<NodeProto>,
    out: &str,
) -> String {
    let mut m = ModelProto {
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(18),
        }],
        graph: Some(GraphProto {
            input: vec![input("X", x)],
            initializer: inits,
            node: nodes,
            ..Default::default()
        }),
        ..Default::default()
    };
    let rep = infer_model(&mut m);
    rep.get(out).map(|v| v.ty.display()).unwrap_or_default()
}

#[test]
fn shape_gather_concat_reshape() {
    let t = infer(
        &["N", "C", "8"],
        vec![
            int_init("i0", &[1], vec![0]),
            int_init("m1", &[1], vec![-1]),
        ],
        vec![
            node("Shape", &["X"], &["s"], vec![]),
            node("Gather", &["s", "i0"], &["n"], vec![]),
            node("Concat", &["n", "m1"], &["t"], vec![int_attr("axis", 0)]),
            node("Reshape", &["X", "t"], &["Y"], vec![]),
        ],
        "Y",
    );
    assert_eq!(t, "float[N,8*C]");
}

#[test]
fn shape_slice_constant_of_shape_and_size() {
    let nodes = vec![
        node("Shape", &["X"], &["s"], vec![int_attr("start", 1)]),
        node("Slice", &["s", "st", "en"], &["p"], vec![]),
        node("ConstantOfShape", &["p"], &["Y"], vec![]),
        node("Size", &["X"], &["z"], vec![]),
        node("Unsqueeze", &["z", "ax"], &["zu"], vec![]),
        node("Expand", &["Y", "e"], &["E"], vec![]),
    ];
    let inits = || {
        vec![
            int_init("st", &[1], vec![0]),
            int_init("en", &[1], vec![i64::MAX]),
            int_init("ax", &[1], vec![0]),
            int_init("e", &[3], vec![2, 1, 1]),
        ]
    };
    assert_eq!(
        infer(&["N", "C", "W"], inits(), nodes.clone(), "Y"),
        "float[C,W]"
    );
    assert_eq!(
        infer(&["N", "C", "W"], inits(), nodes.clone(), "zu"),
        "int64[1]"
    );
    assert_eq!(infer(&["N", "C", "W"], inits(), nodes, "E"), "float[2,C,W]");
}

#[test]
fn range_with_symbolic_limit() {
    let t = infer(
        &["N", "L"],
        vec![
            to_proto(&Tensor::scalar(0i64), "zero"),
            to_proto(&Tensor::scalar(1i64), "one"),
            to_proto(&Tensor::scalar(3i64), "three"),
        ],
        vec![
            node("Shape", &["X"], &["s"], vec![]),
            node("Gather", &["s", "one"], &["l"], vec![]),
            node("Range", &["zero", "l", "three"], &["Y"], vec![]),
        ],
        "Y",
    );
    assert_eq!(t, "int64[CeilToInt(L, 3)]");
}

#[test]
fn data_dependent_sizes_are_fresh_symbols() {
    let t = infer(
        &["N", "4"],
        vec![],
        vec![node("NonZero", &["X"], &["Y"], vec![])],
        "Y",
    );
    assert!(t.starts_with("int64[2,_NonZero"), "{t}");
    let u = infer(
        &["N", "4"],
        vec![],
        vec![node(
            "Unique",
            &["X"],
            &["Y", "i", "inv", "c"],
            vec![int_attr("axis", 1)],
        )],
        "Y",
    );
    assert!(u.starts_with("float[N,_Unique"), "{u}");
}

#[test]
fn reductions_and_split() {
    let r = infer(
        &["N", "C", "W"],
        vec![int_init("a", &[1], vec![-1])],
        vec![node(
            "ReduceSum",
            &["X", "a"],
            &["Y"],
            vec![int_attr("keepdims", 0)],
        )],
        "Y",
    );
    assert_eq!(r, "float[N,C]");
    let s = infer(
        &["N", "10"],
        vec![],
        vec![node(
            "Split",
            &["X"],
            &["a", "b", "c"],
            vec![int_attr("axis", 1), int_attr("num_outputs", 3)],
        )],
        "c",
    );
    assert_eq!(s, "float[N,2]");
    let p = infer(
        &["N", "W"],
        vec![int_init("pads", &[4], vec![0, 1, 0, 2])],
        vec![node("Pad", &["X", "pads"], &["Y"], vec![])],
        "Y",
    );
    assert_eq!(p, "float[N,W+3]");
    let sq = infer(
        &["N", "1", "W"],
        vec![int_init("ax", &[1], vec![1])],
        vec![
            node("Squeeze", &["X", "ax"], &["Y"], vec![]),
            node(
                "Transpose",
                &["Y"],
                &["T"],
                vec![ints_attr("perm", &[1, 0])],
            ),
        ],
        "T",
    );
    assert_eq!(sq, "float[W,N]");
}

/// Rules never panic on odd constant inputs and attributes.
#[test]
fn rules_never_panic() {
    let vals: Vec<(&str, Vec<usize>, Vec<i64>)> = vec![
        ("s3", vec![], vec![3]),
        ("e0", vec![0], vec![]),
        ("big", vec![3], vec![-5, 100, i64::MAX]),
        ("neg", vec![2], vec![i64::MIN, -1]),
        ("m", vec![2, 2], vec![1, 0, 2, 2]),
    ];
    let attr_sets = vec![
        vec![],
        vec![int_attr("axis", 1)],
        vec![int_attr("axis", -9), int_attr("keepdims", 0)],
        vec![int_attr("blocksize", 2), int_attr("num_outputs", 0)],
        vec![int_attr("start", -100), int_attr("end", i64::MIN)],
        vec![ints_attr("axes", &[5]), ints_attr("perm", &[0, 0])],
    ];
    let names: Vec<&str> = std::iter::once("X")
        .chain(vals.iter().map(|v| v.0))
        .collect();
    let ops: Vec<&str> = crate::ops::all()
        .filter(|d| d.domain.is_empty())
        .map(|d| d.op_type)
        .filter(|o| MINE.contains(o))
        .collect();
    for op in ops {
        for opset in [9, 13, 18] {
            for attrs in &attr_sets {
                for a in &names {
                    for b in &names {
                        for c in ["", "s3", "big"] {
                            let inits: Vec<_> = vals
                                .iter()
                                .map(|(n, sh, v)| int_init(n, sh, v.clone()))
                                .collect();
                            let mut m = ModelProto {
                                opset_import: vec![OperatorSetIdProto {
                                    domain: Some(String::new()),
                                    version: Some(opset),
                                }],
                                graph: Some(GraphProto {
                                    input: vec![input("X", &["N", "3"])],
                                    initializer: inits,
                                    node: vec![node(op, &[a, b, c], &["Y", "Z"], attrs.clone())],
                                    ..Default::default()
                                }),
                                ..Default::default()
                            };
                            let r = std::panic::catch_unwind(move || {
                                infer_model(&mut m);
                            });
                            assert!(r.is_ok(), "{op} opset {opset} {attrs:?} on {a},{b},{c}");
                        }
                    }
                }
            }
        }
    }
}

use crate::ops::ODD_INPUT_OPS as MINE;
