//! Reading and building sequence values, shared by the sequence operators:
//! the kernels' sequence input, position and element-type checks, and the
//! shape rules' sequence element type.

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::ops::InferCtx;
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::TypeInfo;

pub(super) fn seq_in<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
) -> Result<(DataType, &'v Vec<Tensor>), KernelError> {
    match ins.get(i).copied().flatten() {
        Some(Value::Sequence { elem_type, items }) => Ok((*elem_type, items)),
        Some(v) => bail!("input {i} must be a sequence, got {}", v.describe()),
        None => bail!("input {i} is missing"),
    }
}

/// A scalar position as an index into `0..=len` (insert) or `0..len`.
pub(super) fn position(t: &Tensor, len: usize, inclusive_end: bool) -> Result<usize, KernelError> {
    let v = t.to_i64_vec()?;
    if v.len() != 1 {
        bail!("position must be a scalar, got shape {:?}", t.shape());
    }
    let n = len as i64;
    let p = v[0];
    let hi = if inclusive_end { n } else { n - 1 };
    if p < -n || p > hi {
        bail!("position {p} is out of range for a sequence of {len} tensors");
    }
    Ok(if p < 0 { p + n } else { p } as usize)
}

pub(super) fn seq(elem_type: DataType, items: Vec<Tensor>) -> Value {
    Value::Sequence { elem_type, items }
}

pub(super) fn check_type(want: DataType, t: &Tensor) -> Result<(), KernelError> {
    if want != DataType::Undefined && t.dtype() != want {
        bail!("a tensor of {} cannot join a sequence of {want}", t.dtype());
    }
    Ok(())
}

pub(super) fn seq_elem(cx: &InferCtx, i: usize) -> Option<TypeInfo> {
    match cx.input(i) {
        Some(TypeInfo::Sequence(t)) => Some((**t).clone()),
        _ => None,
    }
}

pub(super) fn set_seq(cx: &mut InferCtx, i: usize, t: TypeInfo) {
    cx.set(i, TypeInfo::Sequence(Box::new(t)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let p = Tensor::scalar(-1i64);
        assert_eq!(position(&p, 3, false).unwrap(), 2);
        assert_eq!(position(&Tensor::scalar(3i64), 3, true).unwrap(), 3);
        assert!(position(&Tensor::scalar(3i64), 3, false).is_err());
        assert!(position(&Tensor::scalar(-4i64), 3, true).is_err());
    }

    #[test]
    fn type_check() {
        assert!(check_type(DataType::Float, &Tensor::scalar(1.0f32)).is_ok());
        assert!(check_type(DataType::Float, &Tensor::scalar(1i64)).is_err());
    }
}
