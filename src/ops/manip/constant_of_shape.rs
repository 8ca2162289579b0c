//! `ConstantOfShape`: a tensor of the given shape filled with `value`
//! (a float 0 by default).

use super::symbolic_dims::dims_of;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{checked_numel, ints_in, out1};
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::{DataType, Tensor};
use ndarray::IxDyn;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let attr = cx.attrs.tensor("value");
    let elem = attr.map(tensor_elem_of).unwrap_or(DataType::Float);
    let fill: Option<Expr> = attr
        .and_then(|p| crate::proto::from_proto(p).ok())
        .filter(|t| t.dtype().is_int())
        .and_then(|t| t.to_i64_vec().ok())
        .and_then(|v| v.first().copied())
        .map(Expr::int);
    let fill = if attr.is_none() { None } else { fill };
    let known = cx.value(0).cloned();
    let target = known
        .clone()
        .or_else(|| cx.shape_value_or_fresh(0).map(SymValue::vector));
    match target {
        Some(v) => {
            let dims = dims_of(&v.values);
            let fill = if known.is_some() { fill } else { None };
            if let (Some(f), Some(sh)) = (fill, v.ints()) {
                let n = sh
                    .iter()
                    .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) });
                if let Some(n) = n.filter(|n| sh.len() <= 1 && (0..=64).contains(n)) {
                    cx.set_value(
                        0,
                        SymValue {
                            shape: sh.iter().map(|&d| d as usize).collect(),
                            values: vec![f; n as usize],
                        },
                    );
                }
            }
            cx.set_tensor(0, elem, Some(dims));
        }
        None => {
            let r = cx.declared_rank(0)?;
            cx.set_tensor(0, elem, r.map(|r| vec![None; r]));
        }
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let value = match info.attrs.tensor("value") {
        Some(p) => crate::proto::from_proto(p)?,
        None => Tensor::scalar(0f32),
    };
    if value.len() != 1 {
        bail!("ConstantOfShape 'value' must have one element");
    }
    Ok(Box::new(move |_, ins| {
        let shape = ints_in(ins, 0)?;
        if shape.iter().any(|&d| d < 0) {
            bail!("shape {shape:?} has a negative dimension");
        }
        let sh: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        checked_numel(&sh)?;
        let filled = crate::map_array!(&value, a => ndarray::ArrayD::from_elem(
            IxDyn(&sh),
            a.iter().next().cloned().unwrap_or_default(),
        ));
        out1(filled)
    }))
}

fn tensor_elem_of(p: &crate::proto::TensorProto) -> DataType {
    DataType::from_code(p.data_type()).unwrap_or(DataType::Undefined)
}
