//! `MatMul`: numpy matmul, batched with broadcasting.

use super::product_shape::matmul_shape;
use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::matrix_product::matmul_typed;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => Some(matmul_shape(a, b)?),
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        let y = dispatch_num!(
            a,
            matmul_typed(a, b),
            bail!("MatMul does not accept {}", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}
