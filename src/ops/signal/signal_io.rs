//! What the signal operators share at their edges: single-integer and
//! scalar inputs, and the `output_datatype` attribute of the windows and
//! the mel matrix.

use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_of, num_from_f64};
use crate::ops::kernels::manip::ints_in;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub(super) fn out_datatype(cx: &InferCtx) -> Result<DataType, ShapeError> {
    let code = cx.attrs.int_or("output_datatype", 1);
    DataType::from_code(code as i32)
        .ok_or_else(|| ShapeError::new(format!("unknown output_datatype {code}")))
}

pub(super) fn single_int(
    ins: &[Option<&Value>],
    i: usize,
    what: &str,
) -> Result<Option<i64>, KernelError> {
    if opt_tensor_in(ins, i)?.is_none() {
        return Ok(None);
    }
    match ints_in(ins, i)?[..] {
        [v] => Ok(Some(v)),
        _ => bail!("{what} must be a single integer"),
    }
}

pub(super) fn out_type(info: &NodeInfo) -> Result<DataType, KernelError> {
    let code = info.attrs.int_or("output_datatype", 1);
    DataType::from_code(code as i32)
        .filter(|d| d.is_float() || d.is_int())
        .ok_or_else(|| KernelError::new(format!("unsupported output_datatype {code}")))
}

pub(super) fn typed_out(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    if matches!(
        dt,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    ) {
        float_of(dt, shape, v)
    } else {
        num_from_f64(dt, shape, v)
    }
}

pub(super) fn scalar_f(ins: &[Option<&Value>], i: usize, what: &str) -> Result<f64, KernelError> {
    let t = tensor_in(ins, i)?;
    match f64_of(t, what)?[..] {
        [v] => Ok(v),
        _ => bail!("{what} must be a scalar"),
    }
}
