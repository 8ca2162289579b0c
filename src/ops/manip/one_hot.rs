//! `OneHot`: one-hot vectors of length `depth` along `axis`, in the
//! `values` pair's type.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{checked_numel, gather_flat, out1, MAX_ELEMS};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(2)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let depth = cx.value(1).and_then(|v| v.values.first().cloned());
    let ax = crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", -1), shape.len() + 1)?;
    let mut out = shape;
    out.insert(ax, depth);
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -1);
    Ok(Box::new(move |_, ins| {
        let it = tensor_in(ins, 0)?;
        let dt = tensor_in(ins, 1)?;
        let vals = tensor_in(ins, 2)?;
        if vals.len() != 2 {
            bail!("OneHot values must have 2 elements");
        }
        let depth = dt
            .to_f64_vec()
            .and_then(|v| v.first().copied())
            .ok_or_else(|| KernelError::new("OneHot depth must be one number"))?;
        if depth.is_nan() || depth < 1.0 || depth > MAX_ELEMS as f64 {
            bail!("OneHot depth {depth} is invalid");
        }
        let depth = depth as i64;
        let idx: Vec<i64> = it
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("OneHot indices must be numeric"))?
            .into_iter()
            .map(|v| v as i64)
            .collect();
        let r = it.rank() + 1;
        let ax = crate::ops::kernels::norm_axis(axis, r)?;
        let mut shape = it.shape().to_vec();
        shape.insert(ax, depth as usize);
        let n = checked_numel(&shape)?;
        let outer: usize = it.shape()[..ax].iter().product();
        let inner: usize = it.shape()[ax..].iter().product();
        let mut pos = Vec::with_capacity(n);
        for o in 0..outer {
            for d in 0..depth {
                for i in 0..inner {
                    let v = idx[o * inner + i];
                    let v = if v < 0 { v + depth } else { v };
                    pos.push(usize::from(v == d));
                }
            }
        }
        let flat = vals.reshape(&[2])?;
        out1(gather_flat(&flat, &pos, &shape)?)
    }))
}
