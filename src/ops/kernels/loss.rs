//! Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

use super::f64_values::{f64_of, float_like};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Tensor, Value};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Reduction {
    None,
    Sum,
    Mean,
}

fn reduction(info: &NodeInfo) -> Result<Reduction, KernelError> {
    Ok(match info.attrs.string_or("reduction", "mean").as_str() {
        "none" => Reduction::None,
        "sum" => Reduction::Sum,
        "mean" => Reduction::Mean,
        other => bail!("unknown reduction '{other}'"),
    })
}

/// The NLL core on f64 data: `input` of shape (N, C, d...), `target` of shape
/// (N, d...). Returns the loss values and their shape.
fn nll(
    input: &[f64],
    ishape: &[usize],
    target: &[i64],
    tshape: &[usize],
    weight: Option<&[f64]>,
    ignore: Option<i64>,
    red: Reduction,
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
            if Some(t) == ignore {
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
    Ok(match red {
        Reduction::None => (loss, want),
        Reduction::Sum => (vec![loss.iter().sum()], vec![]),
        Reduction::Mean => (vec![loss.iter().sum::<f64>() / wsum], vec![]),
    })
}

fn ignore_index(info: &NodeInfo) -> Option<i64> {
    info.attrs.int("ignore_index")
}

fn target_of(t: &Tensor) -> Result<Vec<i64>, KernelError> {
    if !matches!(
        t.dtype(),
        crate::tensor::DataType::Int32 | crate::tensor::DataType::Int64
    ) {
        bail!("target must be int32 or int64, got {}", t.dtype());
    }
    Ok(t.to_i64_vec()?)
}

pub fn negative_log_likelihood_loss(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let red = reduction(info)?;
    let ignore = ignore_index(info);
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
        let (l, sh) = nll(&xv, x.shape(), &tv, t.shape(), wv.as_deref(), ignore, red)?;
        Ok(vec![Value::Tensor(float_like(x, &sh, l)?)])
    }))
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

pub fn softmax_cross_entropy_loss(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let red = reduction(info)?;
    let ignore = ignore_index(info);
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
        let (l, sh) = nll(&lp, x.shape(), &tv, t.shape(), wv.as_deref(), ignore, red)?;
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
    fn nll_mean_with_weights_and_ignore() {
        // N=2, C=3
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let w = [0.5, 1.0, 2.0];
        let (l, sh) = nll(&x, &[2, 3], &[2, 0], &[2], Some(&w), None, Reduction::Mean).unwrap();
        assert!(sh.is_empty());
        assert!((l[0] - (-(3.0 * 2.0) - 4.0 * 0.5) / 2.5).abs() < 1e-12);
        let (l, _) = nll(
            &x,
            &[2, 3],
            &[2, 0],
            &[2],
            Some(&w),
            Some(0),
            Reduction::Mean,
        )
        .unwrap();
        assert!((l[0] + 3.0).abs() < 1e-12);
        assert!(nll(&x, &[2, 3], &[3, 0], &[2], None, None, Reduction::Sum).is_err());
    }

    #[test]
    fn log_softmax_rows_normalise() {
        let lp = log_softmax_axis1(&[1.0, 2.0, 3.0, 0.0, 0.0, 0.0], &[2, 3]);
        let s: f64 = lp[..3].iter().map(|v| v.exp()).sum();
        assert!((s - 1.0).abs() < 1e-12);
        assert!((lp[3] + 3f64.ln()).abs() < 1e-12);
    }
}
