//! `SequenceInsert`: the sequence with a tensor inserted at `position` (at
//! the end by default).

use super::sequence_value::{check_type, position, seq, seq_elem, seq_in, set_seq};
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::type_merge::merge_types;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = seq_elem(cx, 0);
    let x = cx.input(1).cloned();
    let t = match (s, x) {
        (Some(a), Some(b)) => merge_types(&a, &b),
        (Some(a), None) => a,
        (None, Some(b)) => TypeInfo::Tensor {
            elem: b.elem().unwrap_or(DataType::Undefined),
            shape: None,
        },
        (None, None) => TypeInfo::Unknown,
    };
    set_seq(cx, 0, t);
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (dt, items) = seq_in(ins, 0)?;
        let t = tensor_in(ins, 1)?;
        let dt = if dt == DataType::Undefined {
            t.dtype()
        } else {
            dt
        };
        check_type(dt, t)?;
        let pos = match opt_tensor_in(ins, 2)? {
            Some(p) => position(p, items.len(), true)?,
            None => items.len(),
        };
        let mut items = items.clone();
        items.insert(pos, t.clone());
        Ok(vec![seq(dt, items)])
    }))
}
