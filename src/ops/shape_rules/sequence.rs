//! Rules for sequence and optional operators.

use super::control::merge_types;
use super::norm_axis;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::{Dim, TypeInfo};

fn seq_elem(cx: &InferCtx, i: usize) -> Option<TypeInfo> {
    match cx.input(i) {
        Some(TypeInfo::Sequence(t)) => Some((**t).clone()),
        _ => None,
    }
}

fn set_seq(cx: &mut InferCtx, i: usize, t: TypeInfo) {
    cx.set(i, TypeInfo::Sequence(Box::new(t)));
}

pub fn sequence_empty(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let code = cx.attrs.int_or("dtype", DataType::Float.code() as i64);
    let elem = DataType::from_code(code as i32)
        .ok_or_else(|| ShapeError(format!("dtype {code} is not an element type")))?;
    set_seq(cx, 0, TypeInfo::Tensor { elem, shape: None });
    Ok(())
}

pub fn sequence_construct(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let mut t: Option<TypeInfo> = None;
    for i in 0..cx.num_inputs() {
        let Some(x) = cx.input(i).cloned() else {
            continue;
        };
        t = Some(match t {
            None => x,
            Some(p) => merge_types(&p, &x),
        });
    }
    set_seq(cx, 0, t.unwrap_or(TypeInfo::Unknown));
    Ok(())
}

pub fn sequence_insert(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = seq_elem(cx, 0);
    let x = cx.input(1).cloned();
    let t = match (s, x) {
        (Some(a), Some(b)) => merge_types(&a, &b),
        (Some(a), None) => a,
        (None, Some(b)) => TypeInfo::Tensor {
            elem: b.elem().unwrap_or(DataType::Undefined),
            shape: None,
        },
        (None, None) => TypeInfo::Unknown,
    };
    set_seq(cx, 0, t);
    Ok(())
}

pub fn sequence_at(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = seq_elem(cx, 0) {
        cx.set(0, t);
    }
    Ok(())
}

pub fn sequence_erase(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = cx.input(0).cloned() {
        cx.set(0, t);
    }
    Ok(())
}

pub fn sequence_length(cx: &mut InferCtx) -> Result<(), ShapeError> {
    cx.set_tensor(0, DataType::Int64, Some(vec![]));
    Ok(())
}

pub fn split_to_sequence(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        set_seq(cx, 0, TypeInfo::Tensor { elem, shape: None });
        return Ok(());
    };
    let ax = norm_axis(cx.attrs.int_or("axis", 0), shape.len())?;
    let keepdims = cx.attrs.int_or("keepdims", 1) != 0;
    let mut out = shape.clone();
    if !cx.has_input(1) {
        if keepdims {
            out[ax] = Some(Expr::int(1));
        } else {
            out.remove(ax);
        }
    } else {
        let split = cx.ints(1);
        let scalar = cx.rank(1) == Some(0);
        out[ax] = match split {
            Some(v) if scalar => {
                // chunks of v[0], the last possibly smaller
                let n = shape[ax].as_ref().and_then(|e| e.as_int());
                match (v.first(), n) {
                    (Some(&c), Some(n)) if c > 0 && n % c == 0 => Some(Expr::int(c)),
                    _ => None,
                }
            }
            Some(v) if !v.is_empty() && v.iter().all(|&d| d == v[0]) => Some(Expr::int(v[0])),
            _ => None,
        };
    }
    set_seq(
        cx,
        0,
        TypeInfo::Tensor {
            elem,
            shape: Some(out),
        },
    );
    Ok(())
}

pub fn concat_from_sequence(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let Some(t) = seq_elem(cx, 0) else {
        return Ok(());
    };
    let elem = t.elem().unwrap_or(DataType::Undefined);
    let Some(shape) = t.shape().map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let axis = cx
        .attrs
        .int("axis")
        .ok_or_else(|| ShapeError("ConcatFromSequence needs the 'axis' attribute".into()))?;
    let mut out: Vec<Dim> = shape;
    if cx.attrs.int_or("new_axis", 0) != 0 {
        let ax = norm_axis(axis, out.len() + 1)?;
        out.insert(ax, None);
    } else {
        let ax = norm_axis(axis, out.len())?;
        out[ax] = None;
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn sequence_map(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let mut ins = Vec::with_capacity(cx.num_inputs());
    for i in 0..cx.num_inputs() {
        ins.push(match cx.input(i) {
            Some(TypeInfo::Sequence(t)) => Some((**t).clone()),
            other => other.cloned(),
        });
    }
    let outs = cx.infer_subgraph("body", ins)?;
    for (k, t) in outs.into_iter().enumerate() {
        set_seq(cx, k, t.unwrap_or(TypeInfo::Unknown));
    }
    Ok(())
}

pub fn optional(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let t = match cx.input(0) {
        Some(t) => Some(t.clone()),
        None => cx
            .attrs
            .get("type")
            .and_then(|a| a.tp.as_ref())
            .map(TypeInfo::from_proto),
    };
    match t {
        Some(t) => cx.set(0, TypeInfo::Optional(Box::new(t))),
        None if !cx.has_input(0) => {
            return Err(ShapeError(
                "Optional without input needs the 'type' attribute".into(),
            ))
        }
        None => {}
    }
    Ok(())
}

pub fn optional_has_element(cx: &mut InferCtx) -> Result<(), ShapeError> {
    cx.set_tensor(0, DataType::Bool, Some(vec![]));
    Ok(())
}

pub fn optional_get_element(cx: &mut InferCtx) -> Result<(), ShapeError> {
    match cx.input(0).cloned() {
        Some(TypeInfo::Optional(t)) => cx.set(0, *t),
        Some(t) => cx.set(0, t),
        None => {}
    }
    Ok(())
}

pub fn string_normalizer(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let r = cx.rank(0);
    let d = if cx.attrs.strings("stopwords").is_some_and(|s| !s.is_empty()) {
        Some(cx.fresh())
    } else {
        cx.shape(0).and_then(|s| s.last().cloned()).flatten()
    };
    let shape = match r {
        Some(1) => Some(vec![d]),
        Some(2) => Some(vec![Some(Expr::int(1)), d]),
        _ => None,
    };
    cx.set_tensor(0, DataType::String, shape);
    Ok(())
}
