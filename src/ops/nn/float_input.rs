//! The float input every normalisation and pooling kernel starts from.

use crate::bail;
use crate::ops::kernel::{tensor_in, KernelError};
use crate::tensor::{DataType, Tensor, Value};

pub(super) fn is_float(d: DataType) -> bool {
    matches!(
        d,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    )
}

pub(super) fn float_in<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
    op: &str,
) -> Result<&'v Tensor, KernelError> {
    let t = tensor_in(ins, i)?;
    if !is_float(t.dtype()) {
        bail!("{op}: input {i} must be a float tensor, got {}", t.dtype());
    }
    Ok(t)
}
