//! Rules for the losses: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.

use super::shape_of;
use crate::ops::{InferCtx, ShapeError};

fn loss_shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let red = cx.attrs.string_or("reduction", "mean");
    match red.as_str() {
        "none" => {
            let s = shape_of(cx, 1);
            cx.set_tensor(0, e, s);
        }
        "sum" | "mean" => cx.set_tensor(0, e, Some(vec![])),
        other => return Err(ShapeError(format!("unknown reduction '{other}'"))),
    }
    Ok(())
}

pub fn negative_log_likelihood_loss(cx: &mut InferCtx) -> Result<(), ShapeError> {
    loss_shape(cx)
}

pub fn softmax_cross_entropy_loss(cx: &mut InferCtx) -> Result<(), ShapeError> {
    loss_shape(cx)?;
    let e = cx.elem_req(0)?;
    let s = shape_of(cx, 0);
    cx.set_tensor(1, e, s);
    Ok(())
}
