//! `SequenceErase`: the sequence without the tensor at `position` (the last
//! by default).

use super::sequence_value::{position, seq, seq_in};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = cx.input(0).cloned() {
        cx.set(0, t);
    }
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (dt, items) = seq_in(ins, 0)?;
        if items.is_empty() {
            bail!("cannot erase from an empty sequence");
        }
        let pos = match opt_tensor_in(ins, 1)? {
            Some(p) => position(p, items.len(), false)?,
            None => items.len() - 1,
        };
        let mut items = items.clone();
        items.remove(pos);
        Ok(vec![seq(dt, items)])
    }))
}
