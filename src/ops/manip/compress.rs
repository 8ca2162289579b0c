//! `Compress`: the slices along `axis` (or the flattened elements) whose
//! condition is true.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{gather_axes, out1};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let n = cx.fresh();
    match cx.attrs.int("axis") {
        None => cx.set_tensor(0, elem, Some(vec![Some(n)])),
        Some(a) => {
            let Some(mut shape) = cx.shape(0).map(|s| s.to_vec()) else {
                cx.set_tensor(0, elem, None);
                return Ok(());
            };
            let ax = crate::ops::shape_rules::norm_axis(a, shape.len())?;
            shape[ax] = Some(n);
            cx.set_tensor(0, elem, Some(shape));
        }
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int("axis");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let cond = tensor_in(ins, 1)?.to_i64_vec()?;
        if !cond.is_empty() && tensor_in(ins, 1)?.rank() != 1 {
            bail!("condition must be 1-D");
        }
        let (x, ax) = match axis {
            Some(a) => (x.clone(), crate::ops::kernels::norm_axis(a, x.rank())?),
            None => (x.reshape(&[x.len()])?, 0),
        };
        let d = x.shape()[ax];
        if cond.len() > d {
            bail!("condition has {} values, axis has {d}", cond.len());
        }
        let sel: Vec<usize> = cond
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .map(|(i, _)| i)
            .collect();
        let mut lists: Vec<Vec<usize>> = x.shape().iter().map(|&n| (0..n).collect()).collect();
        lists[ax] = sel;
        out1(gather_axes(&x, &lists)?)
    }))
}
