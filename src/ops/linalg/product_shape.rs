//! The output shape of the matrix products: numpy matmul shapes.

use crate::ops::shape_rules::broadcast;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::Dim;

/// numpy matmul shapes (1-D operands promoted and the axis dropped).
pub(super) fn matmul_shape(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, ShapeError> {
    if a.is_empty() || b.is_empty() {
        return Err(ShapeError::new("MatMul operands must have rank >= 1"));
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
            return Err(ShapeError::new(format!(
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

/// Output 0: the matmul shape of inputs `a` and `b`, of type `elem`.
pub(super) fn matmul_to(
    cx: &mut InferCtx,
    a: usize,
    b: usize,
    elem: DataType,
) -> Result<(), ShapeError> {
    let shape = match (cx.shape(a), cx.shape(b)) {
        (Some(x), Some(y)) => Some(matmul_shape(x, y)?),
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}
