//! The meaning of a Constant node: the tensor its one value attribute
//! holds. The kernel returns it; the shape rule reads its type and value.

use super::{Attrs, KernelError};
use crate::bail;
use crate::tensor::Tensor;

/// The tensor a Constant node holds.
pub fn constant_value(attrs: &Attrs) -> Result<Tensor, KernelError> {
    if let Some(p) = attrs.tensor("value") {
        return Ok(crate::proto::from_proto(p)?);
    }
    if let Some(a) = attrs.get("value_float") {
        return Ok(Tensor::scalar(a.f()));
    }
    if let Some(v) = attrs.get("value_floats") {
        return Ok(Tensor::from_vec(&[v.floats.len()], v.floats.clone())?);
    }
    if let Some(a) = attrs.get("value_int") {
        return Ok(Tensor::scalar(a.i()));
    }
    if let Some(v) = attrs.get("value_ints") {
        return Ok(Tensor::from_vec(&[v.ints.len()], v.ints.clone())?);
    }
    if attrs.has("value_string") {
        return Ok(Tensor::scalar(
            attrs.string("value_string").unwrap_or_default(),
        ));
    }
    if let Some(v) = attrs.strings("value_strings") {
        return Ok(Tensor::from_vec(&[v.len()], v)?);
    }
    if attrs.has("sparse_value") {
        bail!("Constant: sparse_value is not supported");
    }
    bail!("Constant has no value attribute")
}
