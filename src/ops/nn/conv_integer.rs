//! ConvInteger: an 8-bit convolution with zero points, into int32 (exact
//! through f64 for its value range).

use super::quantized_conv::{int8ish, zero_points};
use super::window_shape::conv_like;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::conv::{conv_core, conv_geo, out_shape};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::kernels::sliding_window::WindowAttrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    conv_like(cx, DataType::Int32)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let wa = WindowAttrs::from_info(info);
    let group = info.attrs.int_or("group", 1);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let w = tensor_in(ins, 1)?;
        int8ish(x, "x")?;
        int8ish(w, "w")?;
        let g = conv_geo(x.shape(), w.shape(), &wa, group)?;
        let xz = zero_points(opt_tensor_in(ins, 2)?, 1, "x_zero_point")?[0];
        let wz = zero_points(opt_tensor_in(ins, 3)?, g.m, "w_zero_point")?;
        let xv: Vec<f64> = to_f64s(x, "x")?.into_iter().map(|v| v - xz).collect();
        let per = w.len() / g.m.max(1);
        let wv: Vec<f64> = to_f64s(w, "w")?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v - wz[i / per.max(1)])
            .collect();
        // padding must be the zero point: shifting by xz first makes it 0
        let y = conv_core(&xv, &wv, None, &g);
        let oshape = out_shape(&g, g.m);
        Ok(vec![from_f64s(DataType::Int32, &oshape, y)?.into()])
    }))
}
