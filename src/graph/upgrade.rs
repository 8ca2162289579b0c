//! The opset-upgrade pass: a node written in an old attribute form of its
//! operator is rewritten into the newest form, so shape rules and kernels
//! implement one form only.
//!
//! The forms differ in where a parameter lives: an attribute in old
//! opsets, an input from some opset on (Slice `starts`/`ends`/`axes` and
//! TopK `k` from 10, Pad `pads`/`value` and Clip `min`/`max` from 11,
//! Reshape `shape` from 5, DFT `axis` from 20,
//! Squeeze/Unsqueeze `axes`, Split `split` and ReduceSum `axes` from 13,
//! the other Reduce* `axes` from 18). The
//! rewritten node reads the parameter from a *node-local constant input*: its
//! input slot holds a reserved name ([`is_local`]) that names no graph
//! value, and the value itself travels beside the node in
//! [`Upgraded::consts`]. The shape engine hands it to the rule as a known
//! input value and the plan binds it into the node's kernel; neither ever
//! enters a value table, so it appears in no event log, no `infer`/`show`
//! listing and no saved model (the model itself is never changed).
//!
//! This module knows operator names only as far as their attribute forms;
//! it reads `NodeProto` and writes a copy, below every engine.

use crate::proto::NodeProto;
use crate::tensor::Tensor;

/// Prefix of the reserved input names of node-local constants. A NUL
/// character cannot come from a textual model and no graph value is
/// expected to carry it.
const LOCAL_PREFIX: &str = "\0local:";

/// True when `name` is a node-local constant's input slot (not a graph
/// value).
pub fn is_local(name: &str) -> bool {
    name.starts_with(LOCAL_PREFIX)
}

/// The value of a node-local constant input.
#[derive(Clone, Debug, PartialEq)]
pub enum LocalConst {
    /// A 1-D int64 list (axes, sizes, starts, pads, `k`, a shape).
    Ints(Vec<i64>),
    /// A scalar of the element type of the node's first input (Clip's
    /// bounds, Pad's fill value): the type is known only once the input's
    /// is, so whoever binds the constant makes it of that type.
    ScalarOfInput0(f64),
}

impl LocalConst {
    /// The constant as a tensor, when its type does not depend on the
    /// node's inputs (every kind but [`LocalConst::ScalarOfInput0`]).
    pub fn fixed_tensor(&self) -> Option<Tensor> {
        match self {
            LocalConst::Ints(v) => Some(Self::int_list(v)),
            LocalConst::ScalarOfInput0(_) => None,
        }
    }

    /// A [`LocalConst::Ints`] list as its 1-D int64 tensor.
    pub fn int_list(v: &[i64]) -> Tensor {
        Tensor::I64(ndarray::Array1::from(v.to_vec()).into_dyn())
    }
}

/// A node rewritten into its operator's newest form.
#[derive(Clone, Debug, PartialEq)]
pub struct Upgraded {
    /// The node in the newest form; its node-local inputs have reserved
    /// names.
    pub node: NodeProto,
    /// The node-local constant inputs: input slot and value.
    pub consts: Vec<(usize, LocalConst)>,
}

/// How an attribute's value becomes an input's.
#[derive(Clone, Copy)]
enum Kind {
    /// The attribute's integer list.
    Ints,
    /// The attribute's integer, as a list of one.
    Int,
    /// The attribute's integer as a list of one, or the old form's default
    /// when the attribute is absent (where the new form's default differs).
    IntOr(i64),
    /// The attribute's float, as a scalar of the first input's type.
    Float,
    /// The attribute's float as a scalar of the first input's type, or the
    /// old form's default when the attribute is absent (where the new form
    /// has none).
    FloatOr(f32),
}

/// Where one attribute of an operator moved to an input.
struct Move {
    attr: &'static str,
    input: usize,
    kind: Kind,
}

/// The attribute moves of an operator, and the opset version from which
/// the operator takes the inputs instead.
struct Moves {
    since: i64,
    moves: &'static [Move],
}

const fn mv(attr: &'static str, input: usize, kind: Kind) -> Move {
    Move { attr, input, kind }
}

const AXES_1: &[Move] = &[mv("axes", 1, Kind::Ints)];
const SPLIT_13: &[Move] = &[mv("split", 1, Kind::Ints)];
const SLICE_10: &[Move] = &[
    mv("starts", 1, Kind::Ints),
    mv("ends", 2, Kind::Ints),
    mv("axes", 3, Kind::Ints),
];
const TOPK_10: &[Move] = &[mv("k", 1, Kind::Int)];
/// `paddings` is Pad-1's name of `pads`.
const PAD_11: &[Move] = &[
    mv("pads", 1, Kind::Ints),
    mv("paddings", 1, Kind::Ints),
    mv("value", 2, Kind::Float),
];
/// Clip-6's bounds default to the float32 extremes (so -inf becomes
/// f32::MIN); Clip-11's absent inputs bound nothing.
const CLIP_11: &[Move] = &[
    mv("min", 1, Kind::FloatOr(f32::MIN)),
    mv("max", 2, Kind::FloatOr(f32::MAX)),
];
const RESHAPE_5: &[Move] = &[mv("shape", 1, Kind::Ints)];
/// DFT-17's axis defaults to 1, DFT-20's input to -2.
const DFT_20: &[Move] = &[mv("axis", 2, Kind::IntOr(1))];

const REDUCE_18: &[&str] = &[
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSumSquare",
];

fn find_moves(op: &str) -> Option<Moves> {
    let m = |since, moves| Some(Moves { since, moves });
    match op {
        "Squeeze" | "Unsqueeze" | "ReduceSum" => m(13, AXES_1),
        "Split" => m(13, SPLIT_13),
        "Slice" => m(10, SLICE_10),
        "TopK" => m(10, TOPK_10),
        "Pad" => m(11, PAD_11),
        "Clip" => m(11, CLIP_11),
        "Reshape" => m(5, RESHAPE_5),
        "DFT" => m(20, DFT_20),
        _ if REDUCE_18.contains(&op) => m(18, AXES_1),
        _ => None,
    }
}

/// The newest form of `node` (of the default domain, resolved to
/// `opset`), or `None` when it is already in that form.
pub fn upgrade(node: &NodeProto, opset: i64) -> Option<Upgraded> {
    if !crate::proto::canonical_domain(node.domain()).is_empty() {
        return None;
    }
    let ms = find_moves(node.op_type())?;
    if opset >= ms.since {
        return None;
    }
    let mut out = node.clone();
    let mut consts = vec![];
    let mut slots = vec![];
    for m in ms.moves {
        // an absent attribute is an absent input (or, in Split-1, the
        // sizes given as an input already)
        let found = out.attribute.iter().position(|a| a.name() == m.attr);
        let value = match (found.map(|p| out.attribute.remove(p)), m.kind) {
            (Some(a), Kind::Ints) => LocalConst::Ints(a.ints.clone()),
            (Some(a), Kind::Int | Kind::IntOr(_)) => LocalConst::Ints(vec![a.i()]),
            (Some(a), Kind::Float | Kind::FloatOr(_)) => LocalConst::ScalarOfInput0(a.f() as f64),
            (None, Kind::IntOr(d)) => LocalConst::Ints(vec![d]),
            (None, Kind::FloatOr(d)) => LocalConst::ScalarOfInput0(d as f64),
            (None, _) => continue,
        };
        consts.push((m.input, value));
        slots.push((m.input, format!("{LOCAL_PREFIX}{}", m.attr)));
    }
    // the old forms take no input where the moved ones go
    if let Some(first) = slots.iter().map(|s| s.0).min() {
        let width = slots.iter().map(|s| s.0 + 1).max().unwrap_or(0);
        out.input.truncate(first);
        out.input.resize(width, String::new());
        for (i, name) in slots {
            out.input[i] = name;
        }
    }
    Some(Upgraded { node: out, consts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::AttributeProto;

    fn node(op: &str, inputs: &[&str], axes: Option<&[i64]>) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec!["y".into()],
            attribute: axes
                .map(|a| AttributeProto {
                    name: Some("axes".into()),
                    ints: a.to_vec(),
                    r#type: Some(7),
                    ..Default::default()
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }

    fn check(op: &str, old: i64, new: i64) {
        let u = upgrade(&node(op, &["x"], Some(&[0, -1])), old).expect("old form");
        assert!(u.node.attribute.is_empty(), "{op}");
        assert_eq!(u.node.input.len(), 2, "{op}");
        assert_eq!(u.node.input[0], "x");
        assert!(is_local(&u.node.input[1]));
        assert_eq!(u.consts, vec![(1, LocalConst::Ints(vec![0, -1]))]);
        assert_eq!(upgrade(&node(op, &["x", "a"], None), new), None, "{op}");
    }

    #[test]
    fn squeeze_and_unsqueeze_axes_become_an_input_at_13() {
        check("Squeeze", 11, 13);
        check("Unsqueeze", 12, 13);
    }

    #[test]
    fn split_sizes_become_an_input_at_13() {
        let mut n = node("Split", &["x"], None);
        n.attribute = node("Squeeze", &["x"], Some(&[2, 3])).attribute;
        n.attribute[0].name = Some("split".into());
        let u = upgrade(&n, 11).unwrap();
        assert!(u.node.attribute.is_empty());
        assert_eq!(u.consts, vec![(1, LocalConst::Ints(vec![2, 3]))]);
        // Split-1 could give the sizes as an input already
        let u = upgrade(&node("Split", &["x", "s"], None), 1).unwrap();
        assert_eq!(u.node.input, vec!["x".to_string(), "s".to_string()]);
    }

    #[test]
    fn reduce_axes_become_an_input() {
        check("ReduceSum", 12, 13);
        for op in REDUCE_18 {
            check(op, 17, 18);
        }
    }

    #[test]
    fn an_absent_attribute_is_an_absent_input() {
        let u = upgrade(&node("ReduceMean", &["x"], None), 13).unwrap();
        assert_eq!(u.node.input, vec!["x".to_string()]);
        assert!(u.consts.is_empty());
    }

    #[test]
    fn reshape_shape_becomes_an_input_at_5() {
        let mut n = node("Reshape", &["x"], Some(&[2, -1]));
        n.attribute[0].name = Some("shape".into());
        let u = upgrade(&n, 4).unwrap();
        assert!(u.node.attribute.is_empty());
        assert_eq!(u.consts, vec![(1, LocalConst::Ints(vec![2, -1]))]);
        assert_eq!(upgrade(&node("Reshape", &["x", "s"], None), 5), None);
    }

    /// An attribute of this name and type code, its value still unset.
    fn attr(name: &str, r#type: i32) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(r#type),
            ..Default::default()
        }
    }

    #[test]
    fn topk_k_becomes_a_list_of_one_and_floats_a_scalar_of_the_input() {
        let mut n = node("TopK", &["x"], None);
        n.attribute.push(AttributeProto {
            i: Some(3),
            ..attr("k", 2)
        });
        let u = upgrade(&n, 9).unwrap();
        assert_eq!(u.consts, vec![(1, LocalConst::Ints(vec![3]))]);
        // Clip with only a max: the min is Clip-6's default, f32::MIN
        let mut n = node("Clip", &["x"], None);
        n.attribute.push(AttributeProto {
            f: Some(6.0),
            ..attr("max", 1)
        });
        let u = upgrade(&n, 6).unwrap();
        assert_eq!(u.node.input.len(), 3);
        assert!(is_local(&u.node.input[1]) && is_local(&u.node.input[2]));
        assert_eq!(
            u.consts,
            vec![
                (1, LocalConst::ScalarOfInput0(f32::MIN as f64)),
                (2, LocalConst::ScalarOfInput0(6.0))
            ]
        );
        assert_eq!(LocalConst::ScalarOfInput0(6.0).fixed_tensor(), None);
        assert_eq!(
            LocalConst::Ints(vec![1, 2])
                .fixed_tensor()
                .map(|t| t.shape().to_vec()),
            Some(vec![2])
        );
    }

    #[test]
    fn dft_axis_becomes_input_2_with_the_old_default() {
        let u = upgrade(&node("DFT", &["x", "n"], None), 17).unwrap();
        assert_eq!(u.node.input.len(), 3);
        assert_eq!(u.node.input[1], "n");
        assert_eq!(u.consts, vec![(2, LocalConst::Ints(vec![1]))]);
        let u = upgrade(&node("DFT", &["x"], None), 17).unwrap();
        assert_eq!(u.node.input[1], "");
        assert_eq!(upgrade(&node("DFT", &["x"], None), 20), None);
    }

    #[test]
    fn other_domains_and_ops_are_left_alone() {
        let mut n = node("Squeeze", &["x"], Some(&[0]));
        n.domain = Some("custom".into());
        assert_eq!(upgrade(&n, 11), None);
        assert_eq!(upgrade(&node("Relu", &["x"], None), 1), None);
    }
}
