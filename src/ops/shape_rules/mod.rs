//! The helpers shape rules of every family share: broadcasting, axes,
//! products, type merging.

pub mod manip;
pub mod type_merge;

use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::value_type::Dim;

/// numpy broadcasting of two symbolic dimensions. Two different symbols
/// give `Max(a, b)`, which is exact for valid broadcasts of non-zero sizes.
pub fn broadcast_dim(a: &Dim, b: &Dim) -> Result<Dim, ShapeError> {
    Ok(match (a, b) {
        (Some(x), Some(y)) => {
            if x == y {
                Some(x.clone())
            } else if x.as_int() == Some(1) {
                Some(y.clone())
            } else if y.as_int() == Some(1) {
                Some(x.clone())
            } else if let (Some(p), Some(q)) = (x.as_int(), y.as_int()) {
                return Err(ShapeError::new(format!(
                    "dimensions {p} and {q} cannot be broadcast"
                )));
            } else if x.as_int().is_some() {
                Some(x.clone())
            } else if y.as_int().is_some() {
                Some(y.clone())
            } else {
                Some(x.max(y))
            }
        }
        (Some(x), None) if x.as_int().is_some_and(|v| v > 1) => Some(x.clone()),
        (None, Some(y)) if y.as_int().is_some_and(|v| v > 1) => Some(y.clone()),
        _ => None,
    })
}

/// numpy broadcasting of symbolic shapes.
pub fn broadcast(shapes: &[&[Dim]]) -> Result<Vec<Dim>, ShapeError> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out: Vec<Dim> = vec![Some(Expr::int(1)); rank];
    for s in shapes {
        let off = rank - s.len();
        for (i, d) in s.iter().enumerate() {
            out[off + i] = broadcast_dim(&out[off + i], d)
                .map_err(|e| ShapeError::new(format!("{e} (axis {})", off + i)))?;
        }
    }
    Ok(out)
}

/// Normalises a possibly negative axis.
pub fn norm_axis(axis: i64, rank: usize) -> Result<usize, ShapeError> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(ShapeError::new(format!(
            "axis {axis} is out of range for rank {rank}"
        )));
    }
    Ok(a as usize)
}

/// The product of dimensions, `None` when one is unknown.
pub fn product(dims: &[Dim]) -> Option<Expr> {
    dims.iter()
        .try_fold(Expr::int(1), |acc, d| d.as_ref().map(|e| acc.mul(e)))
}

pub fn int_dim(v: i64) -> Dim {
    if v >= 0 {
        Some(Expr::int(v))
    } else {
        None
    }
}

pub fn shape_of(cx: &InferCtx, i: usize) -> Option<Vec<Dim>> {
    cx.shape(i).map(|s| s.to_vec())
}

/// Output 0 has the element type and shape of input 0.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let s = shape_of(cx, 0);
    cx.set_tensor(0, e, s);
    Ok(())
}
