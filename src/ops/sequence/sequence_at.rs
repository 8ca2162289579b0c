//! `SequenceAt`: the tensor at `position` (negative counts from the end).

use super::sequence_value::{position, seq_elem, seq_in};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = seq_elem(cx, 0) {
        cx.set(0, t);
    }
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        let pos = position(tensor_in(ins, 1)?, items.len(), false)?;
        Ok(vec![Value::Tensor(items[pos].clone())])
    }))
}
