//! `Size`: the input's number of elements as an int64 scalar.

use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::out1;
use crate::ops::shape_rules::product;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::{DataType, Tensor};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    cx.set_tensor(0, DataType::Int64, Some(vec![]));
    if let Some(n) = cx.shape(0).and_then(product) {
        cx.set_value(0, SymValue::scalar(n));
    }
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        out1(Tensor::scalar(tensor_in(ins, 0)?.len() as i64))
    }))
}
