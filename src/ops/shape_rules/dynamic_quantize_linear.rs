//! The rule for DynamicQuantizeLinear.

use super::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;

pub fn dynamic_quantize_linear(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    cx.set_tensor(0, DataType::Uint8, s);
    cx.set_tensor(1, DataType::Float, Some(vec![]));
    cx.set_tensor(2, DataType::Uint8, Some(vec![]));
    Ok(())
}
