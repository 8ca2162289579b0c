//! `MatMulInteger`: the int32 product of 8-bit operands less their zero
//! points.

use super::product_shape::matmul_to;
use super::quantized_operands::{int8ish, shifted};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::matrix_product::matmul_arrays;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    matmul_to(cx, 0, 1, DataType::Int32)
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    use crate::ops::kernel::opt_tensor_in;
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        int8ish(a, "A")?;
        int8ish(b, "B")?;
        let x = shifted(a, opt_tensor_in(ins, 2)?, None, true)?;
        let y = shifted(b, opt_tensor_in(ins, 3)?, None, false)?;
        let r = matmul_arrays(&x, &y)?;
        let shape = r.shape().to_vec();
        let v = r.iter().map(|&v| v as i64 as i32).collect();
        Ok(vec![Tensor::from_vec(&shape, v)?.into()])
    }))
}
