//! Rules for elementwise operators: broadcasting binaries (with data
//! propagation of integer arithmetic) and shape-preserving unaries.

use super::broadcast;
use crate::expr::Expr;
use crate::shape::{InferCtx, ShapeError, SymValue};

/// Output 0 has input 0's type and the broadcast of all inputs' shapes.
pub fn broadcast_inputs(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let mut shapes = Vec::new();
    for i in 0..cx.num_inputs() {
        if !cx.has_input(i) {
            continue;
        }
        match cx.shape(i) {
            Some(s) => shapes.push(s.to_vec()),
            None => {
                cx.set_tensor(0, elem, None);
                return Ok(());
            }
        }
    }
    let refs: Vec<&[_]> = shapes.iter().map(|s| s.as_slice()).collect();
    let out = broadcast(&refs)?;
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

fn propagate(cx: &mut InferCtx, f: impl Fn(&Expr, &Expr) -> Option<Expr>) {
    let (Some(a), Some(b)) = (cx.value(0), cx.value(1)) else {
        return;
    };
    let (a, b) = (a.clone(), b.clone());
    let n = a.values.len().max(b.values.len());
    let pick = |v: &SymValue, i: usize| -> Option<Expr> {
        match v.values.len() {
            1 => Some(v.values[0].clone()),
            k if k == n => Some(v.values[i].clone()),
            _ => None,
        }
    };
    let vals: Option<Vec<Expr>> = (0..n).map(|i| f(&pick(&a, i)?, &pick(&b, i)?)).collect();
    if let Some(values) = vals {
        let shape = if a.shape.len() >= b.shape.len() {
            a.shape
        } else {
            b.shape
        };
        if shape.iter().product::<usize>() == values.len() {
            cx.set_value(0, SymValue { shape, values });
        }
    }
}

pub fn add(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    propagate(cx, |a, b| Some(a.add(b)));
    Ok(())
}

pub fn sub(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    propagate(cx, |a, b| Some(a.sub(b)));
    Ok(())
}

pub fn mul(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    propagate(cx, |a, b| Some(a.mul(b)));
    Ok(())
}

pub fn div(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    // integer Div truncates toward zero; floor division agrees for the
    // non-negative sizes that shapes hold
    propagate(cx, |a, b| (b.as_int() != Some(0)).then(|| a.floor_div(b)));
    Ok(())
}

/// Output 0 has input 0's type and shape.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = cx.input(0).cloned() {
        cx.set(0, t);
    }
    Ok(())
}

/// Identity: same type, and the same known value.
pub fn identity(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    if let Some(v) = cx.value(0).cloned() {
        cx.set_value(0, v);
    }
    Ok(())
}
