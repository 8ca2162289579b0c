//! `SequenceEmpty`: an empty sequence of element type `dtype` (float by
//! default).

use super::sequence_value::{seq, set_seq};
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let code = cx.attrs.int_or("dtype", DataType::Float.code() as i64);
    let elem = DataType::from_code(code as i32)
        .ok_or_else(|| ShapeError::new(format!("dtype {code} is not an element type")))?;
    set_seq(cx, 0, TypeInfo::Tensor { elem, shape: None });
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let code = info.attrs.int_or("dtype", DataType::Float.code() as i64);
    let dt = DataType::from_code(code as i32)
        .ok_or_else(|| KernelError::new(format!("dtype {code} is not an element type")))?;
    Ok(Box::new(move |_, _| Ok(vec![seq(dt, vec![])])))
}
