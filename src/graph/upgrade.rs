//! The opset-upgrade pass: a node written in an old attribute form of its
//! operator is rewritten into the newest form, so shape rules and kernels
//! implement one form only.
//!
//! The forms differ in where an integer list lives: an attribute in old
//! opsets, an input from some opset on (Squeeze/Unsqueeze `axes` from 13,
//! Split `split` from 13, ReduceSum `axes` from 13, the other Reduce*
//! `axes` from 18). The
//! rewritten node reads the list from a *node-local constant input*: its
//! input slot holds a reserved name ([`is_local`]) that names no graph
//! value, and the list itself travels beside the node in
//! [`Upgraded::consts`]. The shape engine hands it to the rule as a known
//! input value and the plan binds it into the node's kernel; neither ever
//! enters a value table, so it appears in no event log, no `infer`/`show`
//! listing and no saved model (the model itself is never changed).
//!
//! This module knows operator names only as far as their attribute forms;
//! it reads `NodeProto` and writes a copy, below every engine.

use crate::proto::NodeProto;

/// Prefix of the reserved input names of node-local constants. A NUL
/// character cannot come from a textual model and no graph value is
/// expected to carry it.
const LOCAL_PREFIX: &str = "\0local:";

/// True when `name` is a node-local constant's input slot (not a graph
/// value).
pub fn is_local(name: &str) -> bool {
    name.starts_with(LOCAL_PREFIX)
}

/// A node rewritten into its operator's newest form.
#[derive(Clone, Debug, PartialEq)]
pub struct Upgraded {
    /// The node in the newest form; its node-local inputs have reserved
    /// names.
    pub node: NodeProto,
    /// The node-local constant inputs: input slot and a 1-D int64 value.
    pub consts: Vec<(usize, Vec<i64>)>,
}

/// Where one operator's integer list moved from an attribute to an input.
struct Move {
    op: &'static str,
    attr: &'static str,
    input: usize,
    since: i64,
}

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

fn find_move(op: &str) -> Option<Move> {
    let m = |op, attr, input, since| Move {
        op,
        attr,
        input,
        since,
    };
    match op {
        "Squeeze" => Some(m("Squeeze", "axes", 1, 13)),
        "Unsqueeze" => Some(m("Unsqueeze", "axes", 1, 13)),
        "ReduceSum" => Some(m("ReduceSum", "axes", 1, 13)),
        "Split" => Some(m("Split", "split", 1, 13)),
        _ => REDUCE_18
            .iter()
            .find(|&&r| r == op)
            .map(|&r| m(r, "axes", 1, 18)),
    }
}

/// The newest form of `node` (of the default domain, resolved to
/// `opset`), or `None` when it is already in that form.
pub fn upgrade(node: &NodeProto, opset: i64) -> Option<Upgraded> {
    if !crate::proto::canonical_domain(node.domain()).is_empty() {
        return None;
    }
    let mv = find_move(node.op_type())?;
    if opset >= mv.since {
        return None;
    }
    debug_assert_eq!(mv.op, node.op_type());
    let mut out = node.clone();
    let pos = out.attribute.iter().position(|a| a.name() == mv.attr);
    let mut consts = vec![];
    // an absent attribute is an absent input (or, in Split-1, the sizes
    // given as an input already)
    if let Some(p) = pos {
        let a = out.attribute.remove(p);
        out.input.truncate(mv.input);
        while out.input.len() < mv.input {
            out.input.push(String::new());
        }
        out.input.push(format!("{LOCAL_PREFIX}{}", mv.attr));
        consts.push((mv.input, a.ints.clone()));
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
        assert_eq!(u.consts, vec![(1, vec![0, -1])]);
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
        assert_eq!(u.consts, vec![(1, vec![2, 3])]);
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
    fn other_domains_and_ops_are_left_alone() {
        let mut n = node("Squeeze", &["x"], Some(&[0]));
        n.domain = Some("custom".into());
        assert_eq!(upgrade(&n, 11), None);
        assert_eq!(upgrade(&node("Relu", &["x"], None), 1), None);
    }
}
