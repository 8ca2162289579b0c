//! `SoftmaxCrossEntropyLoss`: the negative log-likelihood of
//! `log(softmax(scores))` along the class axis (1); the second output is
//! that log-probability.

use super::reduction::{nll, target_of, LossAttrs};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    LossAttrs::decode(&cx.attrs)
        .map_err(ShapeError::new)?
        .set_loss_shape(cx)?;
    let e = cx.elem_req(0)?;
    let s = shape_of(cx, 0);
    cx.set_tensor(1, e, s);
    Ok(())
}

/// log(softmax(x)) along axis 1 of an (N, C, d...) array.
fn log_softmax_axis1(x: &[f64], shape: &[usize]) -> Vec<f64> {
    let n = shape[0];
    let c = shape[1];
    let inner: usize = shape[2..].iter().product();
    let mut out = vec![0.0; x.len()];
    for b in 0..n {
        for d in 0..inner {
            let at = |j: usize| (b * c + j) * inner + d;
            let m = (0..c).map(|j| x[at(j)]).fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = (0..c).map(|j| (x[at(j)] - m).exp()).sum();
            let ls = s.ln() + m;
            for j in 0..c {
                out[at(j)] = x[at(j)] - ls;
            }
        }
    }
    out
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attrs = LossAttrs::decode(&info.attrs).map_err(KernelError::new)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let t = tensor_in(ins, 1)?;
        let w = opt_tensor_in(ins, 2)?;
        if x.rank() < 2 {
            bail!("scores must have rank >= 2, got shape {:?}", x.shape());
        }
        let xv = f64_of(x, "scores")?;
        let tv = target_of(t)?;
        let wv = match w {
            Some(w) => Some(f64_of(w, "weights")?),
            None => None,
        };
        let lp = log_softmax_axis1(&xv, x.shape());
        let (l, sh) = nll(&lp, x.shape(), &tv, t.shape(), wv.as_deref(), &attrs)?;
        Ok(vec![
            Value::Tensor(float_like(x, &sh, l)?),
            Value::Tensor(float_like(x, x.shape(), lp)?),
        ])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_softmax_rows_normalise() {
        let lp = log_softmax_axis1(&[1.0, 2.0, 3.0, 0.0, 0.0, 0.0], &[2, 3]);
        let s: f64 = lp[..3].iter().map(|v| v.exp()).sum();
        assert!((s - 1.0).abs() < 1e-12);
        assert!((lp[3] + 3f64.ln()).abs() < 1e-12);
    }
}
