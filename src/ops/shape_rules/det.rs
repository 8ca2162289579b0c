//! The rule for Det.

use super::shape_of;
use crate::ops::{InferCtx, ShapeError};

pub fn det(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let s = shape_of(cx, 0);
    if let Some(s) = &s {
        if s.len() < 2 {
            return Err(ShapeError(format!("Det needs rank >= 2, got {}", s.len())));
        }
    }
    cx.set_tensor(0, e, s.map(|s| s[..s.len() - 2].to_vec()));
    Ok(())
}
