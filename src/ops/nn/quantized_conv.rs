//! What ConvInteger and QLinearConv share: zero points per tensor or per
//! channel, the 8-bit input check and scalar parameters.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::ops::kernels::f64_values::to_f64s;
use crate::tensor::{DataType, Tensor};

/// A zero point: a scalar, or one value per `count` (channel).
pub(super) fn zero_points(
    t: Option<&Tensor>,
    count: usize,
    what: &str,
) -> Result<Vec<f64>, KernelError> {
    match t {
        None => Ok(vec![0.0; count]),
        Some(t) => {
            let v = to_f64s(t, what)?;
            if v.len() == 1 {
                Ok(vec![v[0]; count])
            } else if v.len() == count {
                Ok(v)
            } else {
                bail!("{what} has {} values, expected 1 or {count}", v.len())
            }
        }
    }
}

pub(super) fn int8ish(t: &Tensor, what: &str) -> Result<(), KernelError> {
    if !matches!(t.dtype(), DataType::Int8 | DataType::Uint8) {
        bail!("{what} must be int8 or uint8, got {}", t.dtype());
    }
    Ok(())
}

/// The single value of a per-tensor parameter.
pub(super) fn scalar_f64(t: &Tensor, what: &str) -> Result<f64, KernelError> {
    let v = to_f64s(t, what)?;
    if v.len() != 1 {
        bail!("{what} must hold one value, got {}", v.len());
    }
    Ok(v[0])
}
