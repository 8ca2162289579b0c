//! `SequenceConstruct`: a sequence of the input tensors, which share one
//! element type.

use super::sequence_value::{check_type, seq, set_seq};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::type_merge::merge_types;
use crate::ops::{InferCtx, ShapeError};
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let mut t: Option<TypeInfo> = None;
    for i in 0..cx.num_inputs() {
        let Some(x) = cx.input(i).cloned() else {
            continue;
        };
        t = Some(match t {
            None => x,
            Some(p) => merge_types(&p, &x),
        });
    }
    set_seq(cx, 0, t.unwrap_or(TypeInfo::Unknown));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let mut items = Vec::with_capacity(ins.len());
        for i in 0..ins.len() {
            items.push(tensor_in(ins, i)?.clone());
        }
        let Some(first) = items.first() else {
            bail!("SequenceConstruct needs at least one input");
        };
        let dt = first.dtype();
        for t in &items {
            check_type(dt, t)?;
        }
        Ok(vec![seq(dt, items)])
    }))
}
