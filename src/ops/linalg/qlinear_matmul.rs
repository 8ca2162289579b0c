//! `QLinearMatMul`: the product of dequantised operands, requantised
//! with the output's scale and zero point.

use super::product_shape::matmul_to;
use super::quantized_operands::{int8ish, shifted};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::matrix_product::matmul_arrays;
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(7)?;
    matmul_to(cx, 0, 3, elem)
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    use crate::tensor::DataType;
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 3)?;
        int8ish(a, "a")?;
        int8ish(b, "b")?;
        let x = shifted(a, Some(tensor_in(ins, 2)?), Some(tensor_in(ins, 1)?), true)?;
        let y = shifted(b, Some(tensor_in(ins, 5)?), Some(tensor_in(ins, 4)?), false)?;
        let ys = crate::ops::kernels::f64_values::to_f64s(tensor_in(ins, 6)?, "y_scale")?;
        let yzt = tensor_in(ins, 7)?;
        let yz = crate::ops::kernels::f64_values::to_f64s(yzt, "y_zero_point")?;
        if ys.len() != 1 || yz.len() != 1 {
            bail!("QLinearMatMul supports a per-tensor output scale and zero point only");
        }
        if ys[0] == 0.0 {
            bail!("y_scale is zero");
        }
        let (lo, hi) = match yzt.dtype() {
            DataType::Int8 => (-128.0, 127.0),
            DataType::Uint8 => (0.0, 255.0),
            other => bail!("y_zero_point must be int8 or uint8, got {other}"),
        };
        let r = matmul_arrays(&x, &y)?;
        let shape = r.shape().to_vec();
        let v: Vec<f64> = r
            .iter()
            .map(|&v| ((v / ys[0]).round_ties_even() + yz[0]).clamp(lo, hi))
            .collect();
        Ok(vec![crate::ops::kernels::f64_values::from_f64s(
            yzt.dtype(),
            &shape,
            v,
        )?
        .into()])
    }))
}
