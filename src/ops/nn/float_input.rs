//! The float input every normalisation and pooling kernel starts from.

use crate::bail;
use crate::ops::kernel::{tensor_in, KernelError};
use crate::tensor::{Tensor, Value};

pub(super) fn float_in<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
    op: &str,
) -> Result<&'v Tensor, KernelError> {
    let t = tensor_in(ins, i)?;
    if !t.dtype().is_standard_float() {
        bail!("{op}: input {i} must be a float tensor, got {}", t.dtype());
    }
    Ok(t)
}
