//! `Upsample` (deprecated since opset 10): Resize with scales only.

use super::resampling::{const_floats, float_list, resize_shape, run, spec_of};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = if cx.opset < 9 {
        cx.attrs
            .floats("scales")
            .map(|v| v.into_iter().map(|x| x as f64).collect())
    } else {
        const_floats(cx, 1)
    };
    resize_shape(cx, s, None, false)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let spec = spec_of(info, true)?;
    let attr_scales = if info.opset < 9 {
        info.attrs
            .floats("scales")
            .map(|v| v.into_iter().map(|x| x as f64).collect::<Vec<_>>())
    } else {
        None
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let scales = match &attr_scales {
            Some(s) => Some(s.clone()),
            None => float_list(Some(tensor_in(ins, 1)?))?,
        };
        Ok(vec![Value::Tensor(run(&spec, x, None, scales, None)?)])
    }))
}
