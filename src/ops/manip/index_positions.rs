//! Flat data positions from index tensors, shared by the gathers and
//! scatters: one index normalised, the element positions of
//! `GatherElements`/`ScatterElements` and the slice positions of
//! `GatherND`/`ScatterND`.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::ops::kernels::manip::{for_each_index, strides};
use crate::tensor::Tensor;

/// An index normalised against a dimension (negative counts from the end).
pub(super) fn norm_index(i: i64, d: usize) -> Result<usize, KernelError> {
    let n = d as i64;
    let v = if i < 0 { i + n } else { i };
    if v < 0 || v >= n {
        bail!("index {i} is out of range for a dimension of size {d}");
    }
    Ok(v as usize)
}

/// Flat data positions addressed by GatherElements/ScatterElements indices.
pub(super) fn element_positions(
    data_shape: &[usize],
    idx_shape: &[usize],
    idx: &[i64],
    ax: usize,
) -> Result<Vec<usize>, KernelError> {
    if idx_shape.len() != data_shape.len() {
        bail!(
            "indices rank {} differs from data rank {}",
            idx_shape.len(),
            data_shape.len()
        );
    }
    for (k, (&a, &b)) in idx_shape.iter().zip(data_shape).enumerate() {
        if k != ax && a > b {
            bail!("indices shape {idx_shape:?} exceeds data shape {data_shape:?} on axis {k}");
        }
    }
    let st = strides(data_shape);
    let mut pos = Vec::with_capacity(idx.len());
    let mut err = None;
    let mut n = 0usize;
    for_each_index(idx_shape, |ix| {
        let mut p = 0usize;
        for (k, &i) in ix.iter().enumerate() {
            let c = if k == ax {
                match norm_index(idx[n], data_shape[k]) {
                    Ok(c) => c,
                    Err(e) => {
                        err.get_or_insert(e);
                        0
                    }
                }
            } else {
                i
            };
            p += c * st[k];
        }
        pos.push(p);
        n += 1;
    });
    match err {
        Some(e) => Err(e),
        None => Ok(pos),
    }
}

/// GatherND/ScatterND: for each index tuple, the flat start of the
/// addressed slice; also the slice length and the tuple grid shape.
pub(super) fn nd_positions(
    data_shape: &[usize],
    it: &Tensor,
    batch: usize,
) -> Result<(Vec<usize>, usize, Vec<usize>), KernelError> {
    let ish = it.shape();
    let q = ish.len();
    let r = data_shape.len();
    if q == 0 {
        bail!("indices must have rank >= 1");
    }
    let k = ish[q - 1];
    if batch >= q || batch >= r || batch + k > r {
        bail!(
            "indices shape {ish:?} does not fit data shape {data_shape:?} with batch_dims {batch}"
        );
    }
    if ish[..batch] != data_shape[..batch] {
        bail!("batch dimensions of indices {ish:?} and data {data_shape:?} differ");
    }
    let idx = it.to_i64_vec()?;
    let st = strides(data_shape);
    let slice: usize = data_shape[batch + k..].iter().product();
    let grid = ish[..q - 1].to_vec();
    let tuples: usize = grid.iter().product();
    let per_batch: usize = ish[batch..q - 1].iter().product();
    let mut starts = Vec::with_capacity(tuples);
    for t in 0..tuples {
        let b = t / per_batch.max(1);
        // batch coordinates from the flat batch number
        let mut p = 0usize;
        let mut rem = b;
        for j in (0..batch).rev() {
            p += (rem % data_shape[j]) * st[j];
            rem /= data_shape[j];
        }
        for j in 0..k {
            p += norm_index(idx[t * k + j], data_shape[batch + j])? * st[batch + j];
        }
        starts.push(p);
    }
    Ok((starts, slice, grid))
}
