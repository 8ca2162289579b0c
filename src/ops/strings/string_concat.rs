//! `StringConcat`: elementwise concatenation, broadcast.

use super::string_values::strings_of;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::{broadcast_shapes, zip2};
use crate::ops::shape_rules::broadcast;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => Some(broadcast(&[a, b])?),
        _ => None,
    };
    cx.set_tensor(0, DataType::String, s);
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = strings_of(tensor_in(ins, 0)?, "X")?;
        let b = strings_of(tensor_in(ins, 1)?, "Y")?;
        broadcast_shapes(a.shape(), b.shape())?;
        let out = zip2(a, b, |x, y| x + &y)?;
        Ok(vec![Value::Tensor(Tensor::Str(out))])
    }))
}
