//! `Binarizer`: 1 where an element is greater than `threshold`, else 0, in
//! the input's own type and shape.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::num_from_f64;
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

struct BinarizerAttrs {
    threshold: f64,
}

impl BinarizerAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        Ok(BinarizerAttrs {
            threshold: a.float_checked("threshold")?.unwrap_or(0.0) as f64,
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let s = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = BinarizerAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let Some(v) = x.to_f64_vec() else {
            bail!("X must be numeric, got {}", x.dtype());
        };
        // NaN stays NaN, as onnxruntime keeps it
        let out = v
            .into_iter()
            .map(|e| {
                if e.is_nan() {
                    e
                } else if e > a.threshold {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        Ok(vec![Value::Tensor(num_from_f64(
            x.dtype(),
            x.shape(),
            out,
        )?)])
    }))
}
