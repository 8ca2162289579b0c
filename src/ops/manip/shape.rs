//! `Shape`: the input's shape as an int64 vector, cut by the `start`
//! and `end` attributes (opset 15).

use super::symbolic_dims::int_dim;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::out1;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, DataType::Int64, Some(vec![None]));
        return Ok(());
    };
    let r = shape.len() as i64;
    let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let s = clampi(cx.attrs.int_or("start", 0));
    let e = clampi(cx.attrs.int("end").unwrap_or(r));
    let dims: Vec<Dim> = if s < e { shape[s..e].to_vec() } else { vec![] };
    cx.set_tensor(0, DataType::Int64, Some(vec![int_dim(dims.len() as i64)]));
    if let Some(vals) = dims.into_iter().collect::<Option<Vec<Expr>>>() {
        cx.set_value(0, SymValue::vector(vals));
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let start = info.attrs.int_or("start", 0);
    let end = info.attrs.int("end");
    Ok(Box::new(move |_, ins| {
        let x = match ins.first().copied().flatten() {
            Some(Value::Tensor(t)) => t,
            _ => bail!("Shape needs a tensor input"),
        };
        let r = x.rank() as i64;
        let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
        let s = clampi(start);
        let e = clampi(end.unwrap_or(r));
        let dims: Vec<i64> = if s < e {
            x.shape()[s..e].iter().map(|&d| d as i64).collect()
        } else {
            vec![]
        };
        out1(Tensor::from_vec(&[dims.len()], dims)?)
    }))
}
