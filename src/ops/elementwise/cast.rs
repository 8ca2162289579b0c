//! Cast: the input's values converted to the `to` type; known integer
//! values propagate through integer (and exactly representable float)
//! casts.

use super::cast_values::{cast_known_value, cast_opts, cast_tensor, dtype_of_code};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Value};

/// Cast: the `to` type with the input's shape; integer values propagate
/// through integer-to-integer casts.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let code = cx
        .attrs
        .int("to")
        .ok_or_else(|| ShapeError::new("Cast: missing attribute 'to'"))?;
    let to = dtype_of_code(code, "to")?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, to, shape);
    cast_known_value(cx, to);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let code = info
        .attrs
        .int("to")
        .ok_or_else(|| KernelError::new("Cast: missing attribute 'to'"))?;
    let to = i32::try_from(code)
        .ok()
        .and_then(DataType::from_code)
        .ok_or_else(|| KernelError::new(format!("Cast: 'to' = {code} is not a data type")))?;
    let opts = cast_opts(info);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        Ok(vec![Value::Tensor(cast_tensor(x, to, &opts)?)])
    }))
}
