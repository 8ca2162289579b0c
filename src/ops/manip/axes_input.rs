//! An optional integer-list input (`axes`, `split`) of Squeeze, Unsqueeze
//! and Split. Their old attribute forms are rewritten into this input by
//! `graph::upgrade` before any rule runs.

use crate::ops::InferCtx;

/// The integer list of input `i`: `Ok(None)` when absent, `Err(())` when
/// given but its value is unknown.
pub(super) fn axes_arg(cx: &InferCtx, i: usize) -> Result<Option<Vec<i64>>, ()> {
    if cx.has_input(i) {
        cx.ints(i).map(Some).ok_or(())
    } else {
        Ok(None)
    }
}
