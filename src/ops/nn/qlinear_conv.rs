//! QLinearConv: a quantized convolution: dequantize, convolve, requantize.

use super::quantized_conv::{int8ish, scalar_f64, zero_points};
use super::window_shape::conv_output;
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::conv::{conv_core, conv_geo, out_shape};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::kernels::sliding_window::WindowAttrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    // x is input 0, w input 3, the output's type that of y_zero_point
    let elem = cx.elem_req(7)?;
    conv_output(cx, elem, 0, 3)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let wa = WindowAttrs::from_info(info);
    let group = info.attrs.int_or("group", 1);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let w = tensor_in(ins, 3)?;
        int8ish(x, "x")?;
        int8ish(w, "w")?;
        let g = conv_geo(x.shape(), w.shape(), &wa, group)?;
        let xs = scalar_f64(tensor_in(ins, 1)?, "x_scale")?;
        let xz = scalar_f64(tensor_in(ins, 2)?, "x_zero_point")?;
        let ws = zero_points(Some(tensor_in(ins, 4)?), g.m, "w_scale")?;
        let wz = zero_points(Some(tensor_in(ins, 5)?), g.m, "w_zero_point")?;
        let ys = scalar_f64(tensor_in(ins, 6)?, "y_scale")?;
        let yzt = tensor_in(ins, 7)?;
        int8ish(yzt, "y_zero_point")?;
        let yz = scalar_f64(yzt, "y_zero_point")?;
        if ys == 0.0 {
            bail!("y_scale is zero");
        }
        let bias = zero_points(opt_tensor_in(ins, 8)?, g.m, "B")?;
        let xv: Vec<f64> = to_f64s(x, "x")?.into_iter().map(|v| v - xz).collect();
        let per = (w.len() / g.m.max(1)).max(1);
        let wv: Vec<f64> = to_f64s(w, "w")?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v - wz[i / per])
            .collect();
        let acc = conv_core(&xv, &wv, Some(&bias), &g);
        let oprod: usize = g.w.out.iter().product::<usize>().max(1);
        let (lo, hi) = if yzt.dtype() == DataType::Int8 {
            (-128.0, 127.0)
        } else {
            (0.0, 255.0)
        };
        let y: Vec<f64> = acc
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let m = (i / oprod) % g.m.max(1);
                ((a * xs * ws[m] / ys).round_ties_even() + yz).clamp(lo, hi)
            })
            .collect();
        Ok(vec![from_f64s(yzt.dtype(), &out_shape(&g, g.m), y)?.into()])
    }))
}
