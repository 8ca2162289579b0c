//! What the per-channel normalisations share: the N x C x spatial split of
//! a shape, per-channel parameter vectors, and standardising blocks to
//! zero mean and unit variance.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::ops::kernels::f64_values::to_f64s;
use crate::tensor::Tensor;

/// Per-channel parameter vector of length `c` (a single value is repeated).
pub(super) fn channel_vec(t: &Tensor, c: usize, what: &str) -> Result<Vec<f64>, KernelError> {
    let v = to_f64s(t, what)?;
    if v.len() == c {
        Ok(v)
    } else if v.len() == 1 {
        Ok(vec![v[0]; c])
    } else {
        bail!("{what} has {} elements, expected {c}", v.len())
    }
}

/// (N, C, spatial size) of an N x C x ... tensor (a 1-D input is N x 1).
pub(super) fn nc_split(shape: &[usize]) -> Result<(usize, usize, usize), KernelError> {
    match shape.len() {
        0 => bail!("the input must have rank >= 1"),
        1 => Ok((shape[0], 1, 1)),
        _ => Ok((shape[0], shape[1], shape[2..].iter().product())),
    }
}

/// Normalises each consecutive block of `block` elements to zero mean and
/// unit variance; returns the per-block (mean, 1/std).
pub(super) fn standardize(v: &mut [f64], block: usize, eps: f64) -> (Vec<f64>, Vec<f64>) {
    let mut means = vec![];
    let mut invs = vec![];
    if block == 0 {
        return (means, invs);
    }
    for ch in v.chunks_mut(block) {
        let m = ch.iter().sum::<f64>() / block as f64;
        let var = ch.iter().map(|x| (x - m).powi(2)).sum::<f64>() / block as f64;
        let inv = 1.0 / (var + eps).sqrt();
        ch.iter_mut().for_each(|x| *x = (*x - m) * inv);
        means.push(m);
        invs.push(inv);
    }
    (means, invs)
}
