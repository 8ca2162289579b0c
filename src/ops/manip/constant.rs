//! `Constant`: the tensor its attribute gives (`value`, `value_float`,
//! `value_ints`, ...).

use super::symbolic_dims::int_dim;
use crate::ops::constant_value::constant_value;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::out1;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let t = crate::ops::constant_value::constant_value(&cx.attrs).map_err(ShapeError::from)?;
    let dims: Vec<Dim> = t.shape().iter().map(|&d| int_dim(d as i64)).collect();
    if let Some(v) = SymValue::of_tensor(&t) {
        cx.set_value(0, v);
    }
    cx.set_tensor(0, t.dtype(), Some(dims));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let v = constant_value(&info.attrs)?;
    Ok(Box::new(move |_, _| out1(v.clone())))
}
