//! CastLike: the input's values converted to the type of a second input.

use super::cast_values::{cast_known_value, cast_opts, cast_tensor};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

/// CastLike: input 1's type with input 0's shape.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let to = cx.elem_req(1)?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, to, shape);
    cast_known_value(cx, to);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let opts = cast_opts(info);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let like = tensor_in(ins, 1)?;
        Ok(vec![Value::Tensor(cast_tensor(x, like.dtype(), &opts)?)])
    }))
}
