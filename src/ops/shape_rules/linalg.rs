//! Rules for matrix products.

use super::broadcast;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::Dim;

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

pub fn gemm(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => {
            if a.len() != 2 || b.len() != 2 {
                return Err(ShapeError("Gemm needs 2-D A and B".into()));
            }
            let ta = cx.attrs.int_or("transA", 0) != 0;
            let tb = cx.attrs.int_or("transB", 0) != 0;
            let m = if ta { &a[1] } else { &a[0] };
            let ka = if ta { &a[0] } else { &a[1] };
            let kb = if tb { &b[1] } else { &b[0] };
            let n = if tb { &b[0] } else { &b[1] };
            if let (Some(x), Some(y)) = (ka, kb) {
                if x.equals(y) == Some(false) {
                    return Err(ShapeError(format!(
                        "Gemm inner dimensions differ: {x} vs {y}"
                    )));
                }
            }
            Some(vec![m.clone(), n.clone()])
        }
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

fn matmul_to(cx: &mut InferCtx, a: usize, b: usize, elem: DataType) -> Result<(), ShapeError> {
    let shape = match (cx.shape(a), cx.shape(b)) {
        (Some(x), Some(y)) => Some(matmul_shape(x, y)?),
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn matmul_integer(cx: &mut InferCtx) -> Result<(), ShapeError> {
    matmul_to(cx, 0, 1, DataType::Int32)
}

pub fn qlinear_matmul(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(7)?;
    matmul_to(cx, 0, 3, elem)
}

pub fn einsum(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let eq = cx
        .attrs
        .string("equation")
        .ok_or_else(|| ShapeError("Einsum needs an equation".into()))?;
    let mut shapes = vec![];
    for i in 0..cx.num_inputs() {
        match cx.shape(i) {
            Some(s) => shapes.push(s.to_vec()),
            None => {
                cx.set_tensor(0, elem, None);
                return Ok(());
            }
        }
    }
    let ranks: Vec<usize> = shapes.iter().map(|s| s.len()).collect();
    let spec = crate::ops::einsum_equation::einsum_parse(&eq, &ranks).map_err(ShapeError)?;
    let mut out = vec![];
    for &c in &spec.output {
        // the size of a label: a non-1 occurrence wins (ellipsis broadcast)
        let mut dim: Dim = Some(Expr::int(1));
        let mut first = true;
        for (l, s) in spec.inputs.iter().zip(&shapes) {
            for (&lc, d) in l.iter().zip(s) {
                if lc == c && (first || dim.as_ref().and_then(|e| e.as_int()) == Some(1)) {
                    dim = d.clone();
                    first = false;
                }
            }
        }
        out.push(dim);
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}
