//! `SequenceLength`: the number of tensors in a sequence, as an int64
//! scalar.

use super::sequence_value::seq_in;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    cx.set_tensor(0, DataType::Int64, Some(vec![]));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        Ok(vec![Value::Tensor(Tensor::scalar(items.len() as i64))])
    }))
}
