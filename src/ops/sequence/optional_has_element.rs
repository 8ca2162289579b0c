//! `OptionalHasElement`: whether an optional (or, from opset 18, any
//! input) holds a value.

use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    cx.set_tensor(0, DataType::Bool, Some(vec![]));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let has = match ins.first().copied().flatten() {
            None | Some(Value::Optional(None)) => false,
            Some(_) => true,
        };
        Ok(vec![Value::Tensor(Tensor::scalar(has))])
    }))
}
