//! `Optional`: an optional holding the input, or an empty one of the
//! attribute `type` when there is no input.

use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let t = match cx.input(0) {
        Some(t) => Some(t.clone()),
        None => cx
            .attrs
            .get("type")
            .and_then(|a| a.tp.as_ref())
            .map(TypeInfo::from_proto),
    };
    match t {
        Some(t) => cx.set(0, TypeInfo::Optional(Box::new(t))),
        None if !cx.has_input(0) => {
            return Err(ShapeError::new(
                "Optional without input needs the 'type' attribute",
            ))
        }
        None => {}
    }
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        Ok(vec![Value::Optional(
            ins.first().copied().flatten().map(|v| Box::new(v.clone())),
        )])
    }))
}
