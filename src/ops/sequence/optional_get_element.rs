//! `OptionalGetElement`: the value inside an optional; a plain tensor or
//! sequence passes through.

use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    match cx.input(0).cloned() {
        Some(TypeInfo::Optional(t)) => cx.set(0, *t),
        Some(t) => cx.set(0, t),
        None => {}
    }
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| match ins.first().copied().flatten() {
        Some(Value::Optional(Some(v))) => Ok(vec![(**v).clone()]),
        Some(Value::Optional(None)) => bail!("the optional input is empty"),
        Some(v) => Ok(vec![v.clone()]),
        None => bail!("input 0 is missing"),
    }))
}
