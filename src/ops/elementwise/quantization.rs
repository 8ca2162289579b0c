//! What QuantizeLinear and DequantizeLinear share: which scale and zero
//! point each element uses (per tensor, per axis or blocked), the integer
//! ranges of the quantized types and the `output_dtype` attribute.

use crate::bail;
use crate::ops::kernel::{KernelError, NodeInfo};
use crate::ops::kernels::norm_axis;
use crate::tensor::{DataType, Tensor};
use half::{bf16, f16};

/// For each element of `x`, the index of its scale / zero point: per
/// tensor (scalar scale), per axis (1-D scale) or blocked (same rank).
pub(super) fn param_index(
    x_shape: &[usize],
    s_shape: &[usize],
    axis: i64,
    block: i64,
) -> Result<Vec<usize>, KernelError> {
    let n: usize = x_shape.iter().product();
    let s_len: usize = s_shape.iter().product();
    if s_shape.is_empty() || (s_shape.len() == 1 && s_len == 1 && block <= 0) {
        if s_len != 1 {
            bail!("scale of shape {s_shape:?} is not a scalar");
        }
        return Ok(vec![0; n]);
    }
    let r = x_shape.len();
    let a = norm_axis(axis, r)?;
    let inner: usize = x_shape[a + 1..].iter().product();
    let d = x_shape[a];
    if block <= 0 {
        if s_shape.len() != 1 || s_len != d {
            bail!(
                "per-axis scale of shape {s_shape:?} does not match axis {a} of input {x_shape:?}"
            );
        }
        return Ok((0..n).map(|i| (i / inner.max(1)) % d.max(1)).collect());
    }
    let b = block as usize;
    if s_shape.len() != r {
        bail!("blocked scale of shape {s_shape:?} must have the rank of input {x_shape:?}");
    }
    for k in 0..r {
        let want = if k == a { d.div_ceil(b) } else { x_shape[k] };
        if s_shape[k] != want {
            bail!(
                "blocked scale of shape {s_shape:?} does not fit input {x_shape:?} with block size {b} on axis {a}"
            );
        }
    }
    // strides of the scale
    let mut s_strides = vec![1usize; r];
    for k in (0..r.saturating_sub(1)).rev() {
        s_strides[k] = s_strides[k + 1] * s_shape[k + 1];
    }
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; r];
    for _ in 0..n {
        let mut si = 0;
        for k in 0..r {
            let v = if k == a { idx[k] / b } else { idx[k] };
            si += v * s_strides[k];
        }
        out.push(si);
        for k in (0..r).rev() {
            idx[k] += 1;
            if idx[k] < x_shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(out)
}

/// Rounds an f64 to the precision of a float type (the type of the
/// arithmetic the spec prescribes).
pub(super) fn round_to(dt: DataType, v: f64) -> f64 {
    match dt {
        DataType::Float => v as f32 as f64,
        DataType::Float16 => f16::from_f64(v).to_f64(),
        DataType::Bfloat16 => bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

pub(super) fn int_range(dt: DataType) -> Option<(f64, f64)> {
    Some(match dt {
        DataType::Uint8 => (0.0, 255.0),
        DataType::Int8 => (-128.0, 127.0),
        DataType::Uint16 => (0.0, 65535.0),
        DataType::Int16 => (-32768.0, 32767.0),
        DataType::Int32 => (i32::MIN as f64, i32::MAX as f64),
        DataType::Uint4 => (0.0, 15.0),
        DataType::Int4 => (-8.0, 7.0),
        DataType::Uint2 => (0.0, 3.0),
        DataType::Int2 => (-2.0, 1.0),
        _ => return None,
    })
}

pub(super) fn dtype_attr(info: &NodeInfo, name: &str) -> Result<Option<DataType>, KernelError> {
    match info.attrs.int(name) {
        None | Some(0) => Ok(None),
        Some(c) => i32::try_from(c)
            .ok()
            .and_then(DataType::from_code)
            .map(Some)
            .ok_or_else(|| KernelError::new(format!("{name} = {c} is not a data type"))),
    }
}

/// The zero point's values, one per scale value (all 0 when absent).
pub(super) fn zero_point_values(
    op: &str,
    zp: Option<&Tensor>,
    scale: &Tensor,
) -> Result<Vec<f64>, KernelError> {
    match zp {
        Some(z) => {
            if z.len() != scale.len() {
                bail!(
                    "{op}: zero point shape {:?} differs from scale shape {:?}",
                    z.shape(),
                    scale.shape()
                );
            }
            Ok(z.to_f64_vec().unwrap_or_default())
        }
        None => Ok(vec![0.0; scale.len()]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_param_index() {
        let idx = param_index(&[2, 4], &[2, 2], 1, 2).unwrap();
        assert_eq!(idx, vec![0, 0, 1, 1, 2, 2, 3, 3]);
        assert!(param_index(&[2, 4], &[2, 3], 1, 2).is_err());
        let per_axis = param_index(&[2, 3], &[3], 1, 0).unwrap();
        assert_eq!(per_axis, vec![0, 1, 2, 0, 1, 2]);
    }
}
