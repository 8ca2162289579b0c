//! The meaning of Slice on one axis: the source indices a (start, end,
//! step) triple selects from a dimension, as the kernel and the shape rule
//! both count them.

use super::KernelError;
use crate::bail;

/// Slice's per-axis source indices for (start, end, step) on a dimension.
pub fn slice_indices(
    dim: usize,
    start: i64,
    end: i64,
    step: i64,
) -> Result<Vec<usize>, KernelError> {
    if step == 0 {
        bail!("slice step cannot be 0");
    }
    let d = dim as i64;
    let mut s = if start < 0 {
        start.saturating_add(d)
    } else {
        start
    };
    let mut e = if end < 0 { end.saturating_add(d) } else { end };
    let mut out = Vec::new();
    if step > 0 {
        s = s.clamp(0, d);
        e = e.clamp(0, d);
        let mut i = s;
        while i < e {
            out.push(i as usize);
            i = i.saturating_add(step);
        }
    } else {
        s = s.clamp(0, (d - 1).max(0));
        e = e.clamp(-1, d - 1);
        if d == 0 {
            return Ok(out);
        }
        let mut i = s;
        while i > e {
            out.push(i as usize);
            i = i.saturating_add(step);
        }
    }
    Ok(out)
}
