//! `NegativeLogLikelihoodLoss`: `-input[n, target[n, d...], d...]`, weighted
//! per class, reduced by `reduction`.

use super::reduction::{nll, target_of, LossAttrs};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    LossAttrs::decode(&cx.attrs)
        .map_err(ShapeError::new)?
        .set_loss_shape(cx)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attrs = LossAttrs::decode(&info.attrs).map_err(KernelError::new)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let t = tensor_in(ins, 1)?;
        let w = opt_tensor_in(ins, 2)?;
        let xv = f64_of(x, "input")?;
        let tv = target_of(t)?;
        let wv = match w {
            Some(w) => {
                if w.dtype() != x.dtype() {
                    bail!("weight must be {}, got {}", x.dtype(), w.dtype());
                }
                Some(f64_of(w, "weight")?)
            }
            None => None,
        };
        let (l, sh) = nll(&xv, x.shape(), &tv, t.shape(), wv.as_deref(), &attrs)?;
        Ok(vec![Value::Tensor(float_like(x, &sh, l)?)])
    }))
}
