//! Identity: its input, of any kind (tensor, sequence, optional), and the
//! input's known value.

use super::value_rules::same_as_input;
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};

/// Identity: same type, and the same known value.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    if let Some(v) = cx.value(0).cloned() {
        cx.set_value(0, v);
    }
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| match ins.first().copied().flatten() {
        Some(v) => Ok(vec![v.clone()]),
        None => bail!("input 0 is missing"),
    }))
}
