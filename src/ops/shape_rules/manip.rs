//! A rule helper other families use (the rules of the manipulation
//! operators themselves are in `src/ops/manip/`): kept at this path for
//! `shape_rules::reduce`.

use crate::ops::InferCtx;

/// The length of 1-D input `i` when known.
pub(crate) fn input_len(cx: &InferCtx, i: usize) -> Option<usize> {
    let s = cx.shape(i)?;
    match s {
        [d] => d.as_ref()?.as_int().filter(|&n| n >= 0).map(|n| n as usize),
        _ => None,
    }
}
