//! `EyeLike`: a 2-D tensor of the input's shape with ones on diagonal
//! `k` and zeros elsewhere.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{out1, tensor_from_f64};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.attrs.int("dtype") {
        Some(c) => DataType::from_code(c as i32)
            .ok_or_else(|| ShapeError::new(format!("unknown dtype {c}")))?,
        None => cx.elem_req(0)?,
    };
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dtype = match info.attrs.int("dtype") {
        Some(c) => Some(
            DataType::from_code(c as i32)
                .ok_or_else(|| KernelError::new(format!("unknown dtype {c}")))?,
        ),
        None => None,
    };
    let k = info.attrs.int_or("k", 0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if x.rank() != 2 {
            bail!("EyeLike needs a 2-D input, got rank {}", x.rank());
        }
        let (h, w) = (x.shape()[0], x.shape()[1]);
        let v: Vec<f64> = (0..h * w)
            .map(|p| {
                if (p % w) as i64 - (p / w) as i64 == k {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        out1(tensor_from_f64(dtype.unwrap_or(x.dtype()), &[h, w], v)?)
    }))
}
