//! What the two losses share: their attributes decoded once, the output
//! shape `reduction` gives, the target check and the negative
//! log-likelihood core.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::ops::shape_rules::shape_of;
use crate::ops::{Attrs, InferCtx, ShapeError};
use crate::tensor::Tensor;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Reduction {
    None,
    Sum,
    Mean,
}

/// The `reduction` and `ignore_index` attributes of a loss.
#[derive(Clone, Copy, Debug)]
pub(super) struct LossAttrs {
    pub reduction: Reduction,
    pub ignore_index: Option<i64>,
}

impl LossAttrs {
    pub fn decode(attrs: &Attrs) -> Result<LossAttrs, String> {
        let reduction = match attrs.string_or("reduction", "mean").as_str() {
            "none" => Reduction::None,
            "sum" => Reduction::Sum,
            "mean" => Reduction::Mean,
            other => return Err(format!("unknown reduction '{other}'")),
        };
        Ok(LossAttrs {
            reduction,
            ignore_index: attrs.int("ignore_index"),
        })
    }

    /// Output 0: the target's shape with `reduction = none`, a scalar
    /// otherwise.
    pub fn set_loss_shape(&self, cx: &mut InferCtx) -> Result<(), ShapeError> {
        let e = cx.elem_req(0)?;
        let shape = match self.reduction {
            Reduction::None => shape_of(cx, 1),
            Reduction::Sum | Reduction::Mean => Some(vec![]),
        };
        cx.set_tensor(0, e, shape);
        Ok(())
    }
}

/// The class indices: int32 or int64 only.
pub(super) fn target_of(t: &Tensor) -> Result<Vec<i64>, KernelError> {
    if !matches!(
        t.dtype(),
        crate::tensor::DataType::Int32 | crate::tensor::DataType::Int64
    ) {
        bail!("target must be int32 or int64, got {}", t.dtype());
    }
    Ok(t.to_i64_vec()?)
}

/// The NLL core on f64 data: `input` of shape (N, C, d...), `target` of shape
/// (N, d...). Returns the loss values and their shape.
pub(super) fn nll(
    input: &[f64],
    ishape: &[usize],
    target: &[i64],
    tshape: &[usize],
    weight: Option<&[f64]>,
    attrs: &LossAttrs,
) -> Result<(Vec<f64>, Vec<usize>), KernelError> {
    if ishape.len() < 2 {
        bail!("input must have rank >= 2, got shape {ishape:?}");
    }
    let n = ishape[0];
    let c = ishape[1];
    let inner: usize = ishape[2..].iter().product();
    let mut want = vec![n];
    want.extend_from_slice(&ishape[2..]);
    if tshape != want.as_slice() {
        bail!("target shape {tshape:?} does not match input shape {ishape:?} (want {want:?})");
    }
    if let Some(w) = weight {
        if w.len() != c {
            bail!("weight has {} elements, the class count is {c}", w.len());
        }
    }
    let mut loss = vec![0.0; n * inner];
    let mut wsum = 0.0;
    for b in 0..n {
        for d in 0..inner {
            let k = b * inner + d;
            let t = target[k];
            if Some(t) == attrs.ignore_index {
                continue;
            }
            if t < 0 || t as usize >= c {
                bail!("target {t} is out of range for {c} classes");
            }
            let t = t as usize;
            let w = weight.map_or(1.0, |w| w[t]);
            loss[k] = -input[(b * c + t) * inner + d] * w;
            wsum += w;
        }
    }
    Ok(match attrs.reduction {
        Reduction::None => (loss, want),
        Reduction::Sum => (vec![loss.iter().sum()], vec![]),
        Reduction::Mean => (vec![loss.iter().sum::<f64>() / wsum], vec![]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(reduction: Reduction, ignore_index: Option<i64>) -> LossAttrs {
        LossAttrs {
            reduction,
            ignore_index,
        }
    }

    #[test]
    fn nll_mean_with_weights_and_ignore() {
        // N=2, C=3
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let w = [0.5, 1.0, 2.0];
        let mean = attrs(Reduction::Mean, None);
        let (l, sh) = nll(&x, &[2, 3], &[2, 0], &[2], Some(&w), &mean).unwrap();
        assert!(sh.is_empty());
        assert!((l[0] - (-(3.0 * 2.0) - 4.0 * 0.5) / 2.5).abs() < 1e-12);
        let ignoring = attrs(Reduction::Mean, Some(0));
        let (l, _) = nll(&x, &[2, 3], &[2, 0], &[2], Some(&w), &ignoring).unwrap();
        assert!((l[0] + 3.0).abs() < 1e-12);
        let sum = attrs(Reduction::Sum, None);
        assert!(nll(&x, &[2, 3], &[3, 0], &[2], None, &sum).is_err());
    }
}
