//! What the quantised matrix products share: operands shifted by their
//! zero points (and scaled), and the 8-bit type check.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::tensor::Tensor;
use ndarray::ArrayD;

/// `x - zp` (or `(x - zp) * scale`) as f64, with a scalar or per-row
/// (`row`) / per-column parameter; a 1-D per-row vector of M values applies
/// to the rows of the last two axes.
pub(super) fn shifted(
    x: &Tensor,
    zp: Option<&Tensor>,
    scale: Option<&Tensor>,
    row: bool,
) -> Result<ArrayD<f64>, KernelError> {
    let xa = ArrayD::from_shape_vec(
        ndarray::IxDyn(x.shape()),
        crate::ops::kernels::f64_values::to_f64s(x, "input")?,
    )?;
    let param = |t: &Tensor, what: &str| -> Result<ArrayD<f64>, KernelError> {
        let v = crate::ops::kernels::f64_values::to_f64s(t, what)?;
        let mut shape = t.shape().to_vec();
        if row && shape.len() == 1 && v.len() > 1 {
            shape.push(1);
        }
        Ok(ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v)?)
    };
    let mut out = match zp {
        Some(z) => crate::ops::kernels::zip2(&xa, &param(z, "zero point")?, |p, q| p - q)?,
        None => xa,
    };
    if let Some(s) = scale {
        out = crate::ops::kernels::zip2(&out, &param(s, "scale")?, |p, q| p * q)?;
    }
    if out.shape() != x.shape() {
        bail!(
            "a zero point or scale of shape {:?} does not fit the input {:?}",
            out.shape(),
            x.shape()
        );
    }
    Ok(out)
}

pub(super) fn int8ish(t: &Tensor, what: &str) -> Result<(), KernelError> {
    if !matches!(
        t.dtype(),
        crate::tensor::DataType::Int8 | crate::tensor::DataType::Uint8
    ) {
        bail!("{what} must be int8 or uint8, got {}", t.dtype());
    }
    Ok(())
}
