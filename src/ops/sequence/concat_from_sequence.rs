//! `ConcatFromSequence`: the tensors of a sequence joined along `axis`, or
//! stacked on a new axis when `new_axis` is 1.

use super::sequence_value::{seq_elem, seq_in};
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::axis_slices::stack_tensors;
use crate::ops::manip::concat_tensors;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let Some(t) = seq_elem(cx, 0) else {
        return Ok(());
    };
    let elem = t.elem().unwrap_or(DataType::Undefined);
    let Some(shape) = t.shape().map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let axis = cx
        .attrs
        .int("axis")
        .ok_or_else(|| ShapeError::new("ConcatFromSequence needs the 'axis' attribute"))?;
    let mut out: Vec<Dim> = shape;
    if cx.attrs.int_or("new_axis", 0) != 0 {
        let ax = crate::ops::shape_rules::norm_axis(axis, out.len() + 1)?;
        out.insert(ax, None);
    } else {
        let ax = crate::ops::shape_rules::norm_axis(axis, out.len())?;
        out[ax] = None;
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info
        .attrs
        .int("axis")
        .ok_or_else(|| KernelError::new("ConcatFromSequence needs the 'axis' attribute"))?;
    let new_axis = info.attrs.int_or("new_axis", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        let Some(first) = items.first() else {
            bail!("ConcatFromSequence of an empty sequence");
        };
        if new_axis {
            let ax = crate::ops::kernels::norm_axis(axis, first.rank() + 1)?;
            Ok(vec![Value::Tensor(stack_tensors(items, ax)?)])
        } else {
            let refs: Vec<&Tensor> = items.iter().collect();
            Ok(vec![Value::Tensor(concat_tensors(&refs, axis, first)?)])
        }
    }))
}
