//! The rule for DeformConv.

use super::shape_of;
use crate::ops::{InferCtx, ShapeError};

pub fn deform_conv(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let w = shape_of(cx, 1);
    let off = shape_of(cx, 2);
    let out = match (x, w, off) {
        (Some(x), Some(w), Some(o)) if x.len() == 4 && w.len() == 4 && o.len() == 4 => {
            Some(vec![x[0].clone(), w[0].clone(), o[2].clone(), o[3].clone()])
        }
        _ => None,
    };
    cx.set_tensor(0, e, out);
    Ok(())
}
