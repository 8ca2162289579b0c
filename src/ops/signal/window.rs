//! What the three windows share: a 1-D output of `size` elements of
//! `output_datatype`, periodic or symmetric.

use super::fourier::MAX_LEN;
use super::signal_io::{out_datatype, out_type, single_int, typed_out};
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

/// HannWindow / HammingWindow / BlackmanWindow.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = out_datatype(cx)?;
    let n = cx.value(0).and_then(|v| v.values.first().cloned());
    cx.set_tensor(0, dt, Some(vec![n]));
    Ok(())
}

pub(super) fn window_kernel(
    info: &NodeInfo,
    f: fn(f64, f64) -> f64,
) -> Result<Kernel, KernelError> {
    let dt = out_type(info)?;
    let periodic = info.attrs.int_or("periodic", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let size =
            single_int(ins, 0, "size")?.ok_or_else(|| KernelError::new("size is missing"))?;
        if size < 0 || size as usize > MAX_LEN {
            bail!("window size {size} is not supported");
        }
        let n = size as usize;
        let denom = if periodic { n as f64 } else { n as f64 - 1.0 };
        let v: Vec<f64> = (0..n)
            .map(|i| if denom > 0.0 { f(i as f64, denom) } else { 1.0 })
            .collect();
        Ok(vec![Value::Tensor(typed_out(dt, &[n], v)?)])
    }))
}
