//! `SwiGLU`: the gated linear unit with a Swish gate.

use super::attention_values::{check_float, float_vals, same_float, sigmoid};
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::from_f64s;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    check_float(cx, 1, "SwiGLU")?;
    if let (Some(a), Some(b)) = (cx.rank(0), cx.rank(1)) {
        if a != b {
            shape_bail!("SwiGLU: A and B must have the same shape");
        }
    }
    same_float(cx, "SwiGLU")
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(Box::new(move |_, ins| {
        let (at, av) = float_vals(ins, 0, "SwiGLU")?;
        let (bt, bv) = float_vals(ins, 1, "SwiGLU")?;
        if at.shape() != bt.shape() || at.dtype() != bt.dtype() {
            bail!(
                "SwiGLU: A ({} {:?}) and B ({} {:?}) must have the same type and shape",
                at.dtype(),
                at.shape(),
                bt.dtype(),
                bt.shape()
            );
        }
        let y = av
            .iter()
            .zip(&bv)
            .map(|(&a, &b)| a * sigmoid(alpha * a) * b)
            .collect();
        Ok(vec![from_f64s(at.dtype(), at.shape(), y)?.into()])
    }))
}
