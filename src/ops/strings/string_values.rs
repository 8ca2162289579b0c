//! The string tensor an operator reads.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::tensor::Tensor;
use ndarray::ArrayD;

pub(super) fn strings_of<'a>(t: &'a Tensor, what: &str) -> Result<&'a ArrayD<String>, KernelError> {
    match t {
        Tensor::Str(a) => Ok(a),
        other => bail!("{what} must be a string tensor, got {}", other.dtype()),
    }
}
