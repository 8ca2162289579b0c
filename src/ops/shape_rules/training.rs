//! The rule for the preview training optimisers: Adagrad, Momentum, Adam.

use super::shape_of;
use crate::ops::{InferCtx, ShapeError};

/// Training optimisers: outputs mirror inputs 2.. (X, then the states).
pub fn optimizer(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let groups = match cx.node.op_type() {
        "Adam" => 4,
        _ => 3,
    };
    let rest = cx.num_inputs().saturating_sub(2);
    if !rest.is_multiple_of(groups) {
        return Err(ShapeError(format!(
            "expected R, T and {groups} groups of tensors"
        )));
    }
    let n = rest / groups;
    // Outputs: X (group 0) then the state groups after G (group 1).
    let mut k = 0;
    for g in (0..groups).filter(|&g| g != 1) {
        for i in 0..n {
            let src = 2 + g * n + i;
            if let Some(e) = cx.elem(src) {
                let s = shape_of(cx, src);
                cx.set_tensor(k, e, s);
            }
            k += 1;
        }
    }
    Ok(())
}
