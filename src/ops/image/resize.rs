//! `Resize`: the resampling of [`super::resampling`], with scales or sizes
//! (and `roi`) as inputs.

use super::resampling::{const_floats, float_list, resize_shape, run, spec_of};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if cx.opset < 11 {
        let s = const_floats(cx, 1);
        return resize_shape(cx, s, None, false);
    }
    let scales = if cx.has_input(2) {
        const_floats(cx, 2)
    } else {
        None
    };
    let sizes = if cx.has_input(3) {
        cx.value(3).map(|v| v.values.clone())
    } else {
        None
    };
    let sizes_given = cx.has_input(3);
    resize_shape(cx, scales, sizes, sizes_given)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let spec = spec_of(info, false)?;
    let opset = info.opset;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let out = if opset < 11 {
            run(&spec, x, None, float_list(Some(tensor_in(ins, 1)?))?, None)?
        } else {
            let roi = opt_tensor_in(ins, 1)?;
            let scales = float_list(opt_tensor_in(ins, 2)?)?;
            let sizes = match opt_tensor_in(ins, 3)? {
                Some(t) if !t.is_empty() => Some(t.to_i64_vec()?),
                _ => None,
            };
            if scales.is_some() && sizes.is_some() {
                bail!("only one of scales and sizes may be given");
            }
            run(&spec, x, roi, scales, sizes)?
        };
        Ok(vec![Value::Tensor(out)])
    }))
}
