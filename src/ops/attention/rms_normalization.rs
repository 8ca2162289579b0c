//! `RMSNormalization`: x / sqrt(mean(x²) + ε) · scale over the trailing
//! axes.

use super::attention_values::{check_float, float_vals};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::broadcast_to;
use crate::ops::kernels::f64_values::from_f64s;
use crate::ops::kernels::norm_axis;
use crate::ops::{InferCtx, ShapeError};

/// RMSNormalization: X's shape, scale's type.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    check_float(cx, 0, "RMSNormalization")?;
    let e = check_float(cx, 1, "RMSNormalization")?;
    if let Some(r) = cx.rank(0) {
        crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", -1), r)?;
    }
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, shape);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let axis = info.attrs.int_or("axis", -1);
    Ok(Box::new(move |_, ins| {
        let (xt, mut v) = float_vals(ins, 0, "RMSNormalization")?;
        let st = tensor_in(ins, 1)?;
        if !st.dtype().is_standard_float() {
            bail!(
                "RMSNormalization: scale must be a float tensor, got {}",
                st.dtype()
            );
        }
        let sh = xt.shape().to_vec();
        let a = norm_axis(axis, sh.len())?;
        let block: usize = sh[a..].iter().product();
        let scale = broadcast_to(st, &sh, "scale")?;
        if block > 0 {
            for chunk in v.chunks_mut(block) {
                let ms = chunk.iter().map(|x| x * x).sum::<f64>() / block as f64;
                let inv = 1.0 / (ms + eps).sqrt();
                chunk.iter_mut().for_each(|x| *x *= inv);
            }
        }
        for (y, s) in v.iter_mut().zip(&scale) {
            *y *= s;
        }
        Ok(vec![from_f64s(st.dtype(), &sh, v)?.into()])
    }))
}
