//! An integer list (`axes`, `split`) that is an attribute before some
//! opset and an input from then on (Squeeze, Unsqueeze, Split).

use crate::ops::InferCtx;

/// The integer list given by attribute `name` before `since`, else input `i`
/// (`Err(())` when the input is given but its value is unknown).
pub(super) fn axes_arg(
    cx: &InferCtx,
    name: &str,
    since: i64,
    i: usize,
) -> Result<Option<Vec<i64>>, ()> {
    if cx.opset < since {
        Ok(cx.attrs.ints(name))
    } else if cx.has_input(i) {
        cx.ints(i).map(Some).ok_or(())
    } else {
        Ok(None)
    }
}
