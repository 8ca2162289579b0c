//! ArgMax and ArgMin: one rule and one engine, parameterised by the
//! direction, so one file; each operator is a module of it ([`arg_max`],
//! [`arg_min`]) with the `shape` and `kernel` the table names.

use super::reductions::{grouped, reduced};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::{norm_axis, typed};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::{bail, dispatch_num};
use ndarray::ArrayD;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let keep = cx.attrs.int_or("keepdims", 1) != 0;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, DataType::Int64, None);
        return Ok(());
    };
    let ax = norm_axis(cx.attrs.int_or("axis", 0), shape.len())?;
    let mask: Vec<bool> = (0..shape.len()).map(|i| i == ax).collect();
    cx.set_tensor(0, DataType::Int64, Some(reduced(&shape, &mask, keep)));
    Ok(())
}

fn arg_typed<T: Num>(
    x: &Tensor,
    ax: usize,
    max: bool,
    last: bool,
) -> Result<Vec<i64>, KernelError> {
    let a: &ArrayD<T> = typed(x, "data")?;
    let mask: Vec<bool> = (0..a.ndim()).map(|i| i == ax).collect();
    let (flat, groups, r) = grouped(a, &mask);
    if r == 0 {
        bail!(
            "cannot take the arg{} of an empty axis",
            if max { "max" } else { "min" }
        );
    }
    let mut out = Vec::with_capacity(groups);
    for g in 0..groups {
        let chunk = &flat[g * r..(g + 1) * r];
        let mut best = 0usize;
        for (i, &v) in chunk.iter().enumerate().skip(1) {
            let b = chunk[best];
            let better = if max { v > b } else { v < b };
            if better || (last && v == b) {
                best = i;
            }
        }
        out.push(best as i64);
    }
    Ok(out)
}

fn arg_builder(info: &NodeInfo, max: bool) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let keep = info.attrs.int_or("keepdims", 1) != 0;
    let last = info.attrs.int_or("select_last_index", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let ax = norm_axis(axis, x.rank())?;
        let v = dispatch_num!(
            x,
            arg_typed(x, ax, max, last),
            bail!("ArgMax/ArgMin do not accept {}", x.dtype())
        )?;
        let shape: Vec<usize> = x
            .shape()
            .iter()
            .enumerate()
            .filter_map(|(i, &d)| if i == ax { keep.then_some(1) } else { Some(d) })
            .collect();
        Ok(vec![Value::Tensor(Tensor::from_vec(&shape, v)?)])
    }))
}

pub mod arg_max {
    pub use super::shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
        super::arg_builder(info, true)
    }
}

pub mod arg_min {
    pub use super::shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
        super::arg_builder(info, false)
    }
}
