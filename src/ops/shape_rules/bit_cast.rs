//! The rule for BitCast.

use super::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;

pub fn bit_cast(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let to = cx
        .attrs
        .int("to")
        .ok_or_else(|| ShapeError("BitCast needs attribute 'to'".into()))?;
    let dt =
        DataType::from_code(to as i32).ok_or_else(|| ShapeError(format!("unknown type {to}")))?;
    let s = shape_of(cx, 0);
    cx.set_tensor(0, dt, s);
    Ok(())
}
