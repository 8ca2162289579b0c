//! `fuse-hardswish-pattern`: HardSwish and HardSigmoid written out as
//! elementwise nodes (as exporters such as Paddle's do) become one
//! activation:
//! - `x * Clip(x + 3, 0, 6) / 6` (Add, Clip, Mul, Div; the division may
//!   come before the Mul, and may be a Mul by 1/6) is HardSwish(x);
//! - `Clip(x + 3, 0, 6) / 6` alone is HardSigmoid(x) with alpha 1/6 and
//!   beta 1/2.
//!
//! When x is the output of a Conv with no fused activation and nothing
//! else reads x, the activation is fused into the Conv; otherwise the
//! nodes become one HardSwish (opset 14 and later) or HardSigmoid node,
//! when the constants are scalars of rank 0 (so the output keeps x's
//! shape). Every intermediate must have no other reader and be no graph
//! output.

use super::Work;
use crate::ops::Attrs;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::AttributeProto;
use crate::runtime::kernels::conv_epilogue::{Act, Epilogue};

/// A constant float32 scalar: its value and rank.
fn scalar(w: &Work, name: &str) -> Option<(f32, usize)> {
    let a = w.f32_constant(name)?;
    if a.len() == 1 && a.ndim() <= 1 {
        a.iter().next().map(|&v| (v, a.ndim()))
    } else {
        None
    }
}

/// The only reader of `name` (an intermediate that may disappear).
fn only_reader(w: &Work, name: &str) -> Option<usize> {
    if !w.internal(name) {
        return None;
    }
    match w.consumers(name)[..] {
        [j] => Some(j),
        _ => None,
    }
}

/// The single output of node `j`.
fn out(w: &Work, j: usize) -> Option<String> {
    let n = w.nodes[j].as_ref()?;
    (n.output.len() == 1 && !n.output[0].is_empty()).then(|| n.output[0].clone())
}

/// The operand of a two-input node `j` other than `this`.
fn other(w: &Work, j: usize, this: &str) -> Option<String> {
    let n = w.nodes[j].as_ref()?;
    if n.input.len() != 2 {
        return None;
    }
    match (n.input[0] == this, n.input[1] == this) {
        (true, false) => Some(n.input[1].clone()),
        (false, true) => Some(n.input[0].clone()),
        _ => None,
    }
}

fn near(v: f32, want: f64) -> bool {
    (v as f64 - want).abs() <= 1e-6 * want.abs().max(1.0)
}

/// Node `j` divides `t` by 6 (Div by 6 or Mul by 1/6): the rank of the
/// constant.
fn by_six(w: &Work, j: usize, t: &str) -> Option<usize> {
    let n = w.nodes[j].as_ref()?;
    if w.is_op(j, "Div") {
        if n.input.len() != 2 || n.input[0] != t {
            return None;
        }
        let (v, r) = scalar(w, &n.input[1])?;
        return near(v, 6.0).then_some(r);
    }
    if w.is_op(j, "Mul") {
        let (v, r) = scalar(w, &other(w, j, t)?)?;
        return near(v, 1.0 / 6.0).then_some(r);
    }
    None
}

/// Node `j` is Clip(t, 0, 6): the largest rank of its bounds.
fn relu6(w: &Work, j: usize, t: &str) -> Option<usize> {
    let n = w.nodes[j].as_ref()?;
    if !w.is_op(j, "Clip") || n.input.first().map(|s| s.as_str()) != Some(t) {
        return None;
    }
    if w.opset < 11 {
        let attrs = Attrs::new(n);
        let (lo, hi) = (attrs.float("min")?, attrs.float("max")?);
        return (lo == 0.0 && hi == 6.0).then_some(0);
    }
    let lo = n.input.get(1).filter(|s| !s.is_empty())?;
    let hi = n.input.get(2).filter(|s| !s.is_empty())?;
    let ((l, rl), (h, rh)) = (scalar(w, lo)?, scalar(w, hi)?);
    (l == 0.0 && h == 6.0).then_some(rl.max(rh))
}

/// A recognised pattern.
struct Found {
    x: String,
    y: String,
    act: Act,
    /// The pattern's nodes, the Add first.
    nodes: Vec<usize>,
    /// The largest rank of its constants.
    rank: usize,
}

/// The pattern starting at Add node `a`.
fn find(w: &Work, a: usize) -> Option<Found> {
    if !w.is_op(a, "Add") {
        return None;
    }
    let n = w.nodes[a].as_ref()?;
    if n.input.len() != 2 {
        return None;
    }
    let (x, r0) = match (scalar(w, &n.input[1]), scalar(w, &n.input[0])) {
        (Some((v, r)), _) if near(v, 3.0) => (n.input[0].clone(), r),
        (_, Some((v, r))) if near(v, 3.0) => (n.input[1].clone(), r),
        _ => return None,
    };
    if x.is_empty() || w.constant(&x).is_some() {
        return None;
    }
    let t1 = out(w, a)?;
    let clip = only_reader(w, &t1)?;
    let r1 = relu6(w, clip, &t1)?;
    let t2 = out(w, clip)?;
    let k = only_reader(w, &t2)?;
    let t3 = out(w, k)?;
    let rank = r0.max(r1);
    // x * clip, then / 6
    if w.is_op(k, "Mul") && other(w, k, &t2).as_deref() == Some(x.as_str()) {
        let d = only_reader(w, &t3)?;
        let r2 = by_six(w, d, &t3)?;
        return Some(Found {
            x,
            y: out(w, d)?,
            act: Act::HardSwish,
            nodes: vec![a, clip, k, d],
            rank: rank.max(r2),
        });
    }
    // clip / 6, then maybe * x
    let r2 = by_six(w, k, &t2)?;
    let rank = rank.max(r2);
    if let Some(m) = only_reader(w, &t3) {
        if w.is_op(m, "Mul") && other(w, m, &t3).as_deref() == Some(x.as_str()) {
            return Some(Found {
                x,
                y: out(w, m)?,
                act: Act::HardSwish,
                nodes: vec![a, clip, k, m],
                rank,
            });
        }
    }
    Some(Found {
        x,
        y: t3,
        act: Act::HardSigmoid(1.0 / 6.0, 0.5),
        nodes: vec![a, clip, k],
        rank,
    })
}

/// The Conv producing `x` when the pattern's nodes are all that read it
/// and the Conv has no activation yet.
fn conv_producer(w: &Work, f: &Found) -> Option<usize> {
    if !w.internal(&f.x) {
        return None;
    }
    let readers = w.consumers(&f.x);
    if readers.is_empty() || readers.iter().any(|r| !f.nodes.contains(r)) {
        return None;
    }
    let i = w.nodes.iter().position(|n| {
        n.as_ref()
            .is_some_and(|n| n.output.len() == 1 && n.output[0] == f.x)
    })?;
    if !w.is_op(i, "Conv") || w.epilogue[i].as_ref().is_some_and(|e| e.act != Act::None) {
        return None;
    }
    Some(i)
}

fn float_attr(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(v),
        ..Default::default()
    }
}

pub(super) fn run(w: &mut Work) -> usize {
    let mut count = 0;
    for a in 0..w.nodes.len() {
        let Some(f) = find(w, a) else {
            continue;
        };
        if let Some(i) = conv_producer(w, &f) {
            if let Some(conv) = w.nodes[i].as_mut() {
                conv.output[0] = f.y.clone();
            }
            w.epilogue[i].get_or_insert_with(Epilogue::none).act = f.act;
            for &j in &f.nodes {
                w.absorb(i, j);
            }
            count += 1;
            continue;
        }
        let (op, attrs) = match f.act {
            Act::HardSwish if w.opset >= 14 => ("HardSwish", vec![]),
            Act::HardSigmoid(al, be) => (
                "HardSigmoid",
                vec![float_attr("alpha", al), float_attr("beta", be)],
            ),
            _ => continue,
        };
        if f.rank != 0 {
            continue;
        }
        let Some(add) = w.nodes[a].as_mut() else {
            continue;
        };
        add.op_type = Some(op.into());
        add.input = vec![f.x.clone()];
        add.output = vec![f.y.clone()];
        add.attribute = attrs;
        for &j in &f.nodes[1..] {
            w.absorb(a, j);
        }
        w.fused_ops[a] = vec![op.to_string()];
        count += 1;
    }
    count
}
