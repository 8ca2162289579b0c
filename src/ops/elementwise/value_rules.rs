//! The shape rules the elementwise operators share: the broadcast of the
//! inputs' shapes, the input's type kept, and data propagation of known
//! (integer) values through an operator's scalar function.

use crate::expr::Expr;
use crate::ops::shape_rules::broadcast;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::DataType;

/// Output 0 has input 0's type and the broadcast of all inputs' shapes.
pub fn broadcast_inputs(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    broadcast_as(cx, elem)
}

/// Output 0: a broadcast of all inputs' shapes with element type `elem`.
pub fn broadcast_as(cx: &mut InferCtx, elem: DataType) -> Result<(), ShapeError> {
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

/// Data propagation of an elementwise operator over all its inputs' known
/// values (broadcasting scalars and equal-length tensors).
pub fn propagate_all(cx: &mut InferCtx, f: impl Fn(&[Expr]) -> Option<Expr>) {
    let n_in = cx.num_inputs();
    let vals: Option<Vec<SymValue>> = (0..n_in).map(|i| cx.value(i).cloned()).collect();
    let Some(vals) = vals.filter(|v| !v.is_empty()) else {
        return;
    };
    let n = vals.iter().map(|v| v.values.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut args = Vec::with_capacity(vals.len());
        for v in &vals {
            match v.values.len() {
                1 => args.push(v.values[0].clone()),
                k if k == n => args.push(v.values[i].clone()),
                _ => return,
            }
        }
        match f(&args) {
            Some(e) => out.push(e),
            None => return,
        }
    }
    let shape = vals
        .iter()
        .max_by_key(|v| v.shape.len())
        .map(|v| v.shape.clone())
        .unwrap_or_default();
    if shape.iter().product::<usize>() == out.len() {
        cx.set_value(0, SymValue { shape, values: out });
    }
}

/// Data propagation of a unary operator.
pub fn propagate_unary(cx: &mut InferCtx, f: impl Fn(&Expr) -> Option<Expr>) {
    if let Some(v) = cx.value(0).cloned() {
        let values: Option<Vec<Expr>> = v.values.iter().map(&f).collect();
        if let Some(values) = values {
            cx.set_value(
                0,
                SymValue {
                    shape: v.shape,
                    values,
                },
            );
        }
    }
}

/// Data propagation of a binary operator over its inputs' known values
/// (a scalar broadcasts against a tensor of any length).
pub fn propagate(cx: &mut InferCtx, f: impl Fn(&Expr, &Expr) -> Option<Expr>) {
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

/// A truth value as the integer 1 or 0.
pub fn truth(b: bool) -> Expr {
    Expr::int(i64::from(b))
}

/// Output 0 has input 0's type and shape.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = cx.input(0).cloned() {
        cx.set(0, t);
    }
    Ok(())
}

/// Output 0 is bool with input 0's shape (IsNaN, IsInf).
pub fn bool_like_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, DataType::Bool, shape);
    Ok(())
}
