//! Rules for If, Loop and Scan (through their bodies), and the type
//! merging they share with the sequence rules.

use super::norm_axis;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::{Dim, TypeInfo};

/// Merges two dimensions: equal kept, different unknown.
pub fn merge_dim(a: &Dim, b: &Dim) -> Dim {
    match (a, b) {
        (Some(x), Some(y)) if x == y => Some(x.clone()),
        _ => None,
    }
}

/// Merges two types: what both agree on.
pub fn merge_types(a: &TypeInfo, b: &TypeInfo) -> TypeInfo {
    match (a, b) {
        (
            TypeInfo::Tensor {
                elem: e1,
                shape: s1,
            },
            TypeInfo::Tensor {
                elem: e2,
                shape: s2,
            },
        ) => {
            let elem = if e1 == e2 || *e2 == DataType::Undefined {
                *e1
            } else if *e1 == DataType::Undefined {
                *e2
            } else {
                DataType::Undefined
            };
            let shape = match (s1, s2) {
                (Some(x), Some(y)) if x.len() == y.len() => {
                    Some(x.iter().zip(y).map(|(p, q)| merge_dim(p, q)).collect())
                }
                _ => None,
            };
            TypeInfo::Tensor { elem, shape }
        }
        (TypeInfo::Sequence(x), TypeInfo::Sequence(y)) => {
            TypeInfo::Sequence(Box::new(merge_types(x, y)))
        }
        (TypeInfo::Optional(x), TypeInfo::Optional(y)) => {
            TypeInfo::Optional(Box::new(merge_types(x, y)))
        }
        (TypeInfo::Unknown, o) | (o, TypeInfo::Unknown) => o.clone(),
        (x, _) => x.clone(),
    }
}

fn merge_opt(a: Option<&TypeInfo>, b: Option<&TypeInfo>) -> Option<TypeInfo> {
    match (a, b) {
        (Some(x), Some(y)) => Some(merge_types(x, y)),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    }
}

fn scalar(elem: DataType) -> TypeInfo {
    TypeInfo::Tensor {
        elem,
        shape: Some(vec![]),
    }
}

/// A type with a dimension inserted at `axis` (tensors only).
fn insert_dim(t: &TypeInfo, axis: usize, d: Dim) -> TypeInfo {
    match t {
        TypeInfo::Tensor { elem, shape } => TypeInfo::Tensor {
            elem: *elem,
            shape: shape.as_ref().map(|s| {
                let mut s = s.clone();
                s.insert(axis.min(s.len()), d);
                s
            }),
        },
        other => other.clone(),
    }
}

/// A type with the dimension at `axis` removed (tensors only).
fn remove_dim(t: &TypeInfo, axis: usize) -> TypeInfo {
    match t {
        TypeInfo::Tensor { elem, shape } => TypeInfo::Tensor {
            elem: *elem,
            shape: shape.as_ref().map(|s| {
                let mut s = s.clone();
                if axis < s.len() {
                    s.remove(axis);
                }
                s
            }),
        },
        other => other.clone(),
    }
}

/// Like [`merge_types`], but dimensions the two types disagree on become
/// fresh symbols (the size depends on data) instead of unknown.
fn merge_fresh(cx: &mut InferCtx, a: &TypeInfo, b: &TypeInfo) -> TypeInfo {
    let mut m = merge_types(a, b);
    freshen(cx, &mut m, a, b);
    m
}

fn freshen(cx: &mut InferCtx, m: &mut TypeInfo, a: &TypeInfo, b: &TypeInfo) {
    match (m, a, b) {
        (
            TypeInfo::Tensor { shape: Some(s), .. },
            TypeInfo::Tensor { shape: Some(x), .. },
            TypeInfo::Tensor { shape: Some(y), .. },
        ) => {
            for (k, d) in s.iter_mut().enumerate() {
                if d.is_none() && x[k].is_some() && y[k].is_some() {
                    *d = Some(cx.fresh());
                }
            }
        }
        (TypeInfo::Sequence(m), TypeInfo::Sequence(x), TypeInfo::Sequence(y))
        | (TypeInfo::Optional(m), TypeInfo::Optional(x), TypeInfo::Optional(y)) => {
            freshen(cx, m, x, y)
        }
        _ => {}
    }
}

/// If: a known condition takes its branch (types and values); otherwise
/// the two branches merge, sizes they disagree on becoming fresh symbols.
pub fn if_rule(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let cond = cx.ints(0).filter(|v| v.len() == 1).map(|v| v[0] != 0);
    if let Some(c) = cond {
        let outs =
            cx.infer_subgraph_values(if c { "then_branch" } else { "else_branch" }, vec![])?;
        for (i, o) in outs.into_iter().enumerate().take(cx.num_outputs()) {
            if let Some((t, v)) = o {
                cx.set(i, t);
                if let Some(v) = v {
                    cx.set_value(i, v);
                }
            }
        }
        return Ok(());
    }
    let a = cx.infer_subgraph_values("then_branch", vec![])?;
    let b = cx.infer_subgraph_values("else_branch", vec![])?;
    for i in 0..cx.num_outputs() {
        let ta = a.get(i).and_then(|t| t.as_ref());
        let tb = b.get(i).and_then(|t| t.as_ref());
        let t = match (ta, tb) {
            (Some((x, _)), Some((y, _))) => Some(merge_fresh(cx, x, y)),
            (Some((x, _)), None) | (None, Some((x, _))) => Some(x.clone()),
            (None, None) => None,
        };
        if let Some(t) = t {
            cx.set(i, t);
        }
        // both branches give the same known value
        if let (Some((_, Some(va))), Some((_, Some(vb)))) = (ta, tb) {
            if va == vb {
                let v = va.clone();
                cx.set_value(i, v);
            }
        }
    }
    Ok(())
}

pub fn loop_rule(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n_carried = cx.num_inputs().saturating_sub(2);
    let mut body_in = vec![Some(scalar(DataType::Int64)), Some(scalar(DataType::Bool))];
    for i in 0..n_carried {
        body_in.push(cx.input(i + 2).cloned());
    }
    let outs = cx.infer_subgraph("body", body_in)?;
    let trip: Dim = if !cx.has_input(1) && cx.has_input(0) {
        cx.ints(0).and_then(|v| v.first().copied()).map(Expr::int)
    } else {
        None
    };
    let trip = Some(trip.unwrap_or_else(|| cx.fresh()));
    for k in 0..cx.num_outputs() {
        let body_t = outs.get(k + 1).and_then(|t| t.as_ref());
        if k < n_carried {
            if let Some(t) = merge_opt(body_t, cx.input(k + 2)).filter(|_| body_t.is_some()) {
                cx.set(k, t);
            } else if let Some(t) = cx.input(k + 2).cloned() {
                cx.set(k, t);
            }
        } else if let Some(t) = body_t {
            let t = insert_dim(t, 0, trip.clone());
            cx.set(k, t);
        }
    }
    Ok(())
}

pub fn scan_rule(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n_scan_in = cx
        .attrs
        .int("num_scan_inputs")
        .ok_or_else(|| ShapeError("Scan needs 'num_scan_inputs'".into()))?
        .max(0) as usize;
    let v8 = cx.opset < 9;
    let off = usize::from(v8);
    let n_in = cx.num_inputs().saturating_sub(off);
    if n_scan_in > n_in {
        return Err(ShapeError(format!(
            "num_scan_inputs {n_scan_in} does not fit {n_in} inputs"
        )));
    }
    let n_state = n_in - n_scan_in;
    let in_axes = if v8 {
        vec![0; n_scan_in]
    } else {
        cx.attrs
            .ints("scan_input_axes")
            .unwrap_or_else(|| vec![0; n_scan_in])
    };
    // strip the batch axis of opset 8
    let strip = |t: Option<&TypeInfo>| -> Option<TypeInfo> {
        t.map(|t| if v8 { remove_dim(t, 0) } else { t.clone() })
    };
    let batch: Dim = if v8 {
        (off..cx.num_inputs())
            .find_map(|i| cx.shape(i).and_then(|s| s.first().cloned()))
            .flatten()
    } else {
        None
    };
    let mut body_in = Vec::with_capacity(n_in);
    for i in 0..n_state {
        body_in.push(strip(cx.input(off + i)));
    }
    let mut len: Dim = None;
    for k in 0..n_scan_in {
        let t = strip(cx.input(off + n_state + k));
        let ax = in_axes.get(k).copied().unwrap_or(0);
        match &t {
            Some(t @ TypeInfo::Tensor { shape: Some(s), .. }) => {
                let a = norm_axis(ax, s.len())?;
                if k == 0 {
                    len = s[a].clone();
                }
                body_in.push(Some(remove_dim(t, a)));
            }
            _ => body_in.push(None),
        }
    }
    let outs = cx.infer_subgraph("body", body_in.clone())?;
    let len = Some(len.unwrap_or_else(|| cx.fresh()));
    let out_axes = if v8 {
        vec![]
    } else {
        cx.attrs.ints("scan_output_axes").unwrap_or_default()
    };
    for k in 0..cx.num_outputs() {
        let body_t = outs.get(k).and_then(|t| t.as_ref());
        let t = if k < n_state {
            merge_opt(body_t, body_in.get(k).and_then(|t| t.as_ref()))
        } else {
            body_t.map(|t| {
                let r = t.shape().map_or(0, |s| s.len()) + 1;
                let ax = out_axes.get(k - n_state).copied().unwrap_or(0);
                let a = norm_axis(ax, r).unwrap_or(0);
                insert_dim(t, a, len.clone())
            })
        };
        if let Some(t) = t {
            let t = if v8 {
                insert_dim(&t, 0, batch.clone())
            } else {
                t
            };
            cx.set(k, t);
        }
    }
    Ok(())
}
