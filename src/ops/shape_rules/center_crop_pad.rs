//! The rule for CenterCropPad.

use super::norm_axis;
use super::shape_of;
use crate::ops::{InferCtx, ShapeError};

pub fn center_crop_pad(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let Some(mut s) = shape_of(cx, 0) else {
        cx.set_tensor(0, e, None);
        return Ok(());
    };
    let r = s.len();
    let axes: Vec<usize> = match cx.attrs.ints("axes") {
        Some(a) => a
            .iter()
            .map(|&v| norm_axis(v, r))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    match cx.value(1).map(|v| v.values.clone()) {
        Some(vals) if vals.len() == axes.len() => {
            for (&a, v) in axes.iter().zip(vals) {
                s[a] = Some(v);
            }
        }
        Some(vals) => {
            return Err(ShapeError(format!(
                "shape has {} values for {} axes",
                vals.len(),
                axes.len()
            )))
        }
        None => {
            for &a in &axes {
                s[a] = None;
            }
        }
    }
    cx.set_tensor(0, e, Some(s));
    Ok(())
}
