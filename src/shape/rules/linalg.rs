//! Rules for matrix products.

use super::broadcast;
use crate::shape::{Dim, InferCtx, ShapeError};

/// numpy matmul shapes (1-D operands promoted and the axis dropped).
pub fn matmul_shape(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, ShapeError> {
    if a.is_empty() || b.is_empty() {
        return Err(ShapeError("MatMul operands must have rank >= 1".into()));
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    let a1 = a.len() == 1;
    let b1 = b.len() == 1;
    if a1 {
        a.insert(0, Some(crate::expr::Expr::int(1)));
    }
    if b1 {
        b.push(Some(crate::expr::Expr::int(1)));
    }
    let (m, k) = (&a[a.len() - 2], &a[a.len() - 1]);
    let (k2, n) = (&b[b.len() - 2], &b[b.len() - 1]);
    if let (Some(x), Some(y)) = (k, k2) {
        if x.equals(y) == Some(false) {
            return Err(ShapeError(format!(
                "MatMul inner dimensions differ: {x} vs {y}"
            )));
        }
    }
    let mut out = broadcast(&[&a[..a.len() - 2], &b[..b.len() - 2]])?;
    if !a1 {
        out.push(m.clone());
    }
    if !b1 {
        out.push(n.clone());
    }
    Ok(out)
}

pub fn matmul(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => Some(matmul_shape(a, b)?),
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}
