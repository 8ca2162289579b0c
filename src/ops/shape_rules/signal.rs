//! Rules for signal processing: DFT, STFT, the windows, MelWeightMatrix.

use super::{int_dim, shape_of};
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::Dim;

fn out_datatype(cx: &InferCtx) -> Result<DataType, ShapeError> {
    let code = cx.attrs.int_or("output_datatype", 1);
    DataType::from_code(code as i32)
        .ok_or_else(|| ShapeError(format!("unknown output_datatype {code}")))
}

/// HannWindow / HammingWindow / BlackmanWindow.
pub fn window(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = out_datatype(cx)?;
    let n = cx.value(0).and_then(|v| v.values.first().cloned());
    cx.set_tensor(0, dt, Some(vec![n]));
    Ok(())
}

pub fn mel_weight_matrix(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = out_datatype(cx)?;
    let mel = cx
        .ints(0)
        .and_then(|v| v.first().copied())
        .and_then(int_dim);
    let dft = cx
        .ints(1)
        .and_then(|v| v.first().copied())
        .and_then(|d| int_dim(d / 2 + 1));
    cx.set_tensor(0, dt, Some(vec![dft, mel]));
    Ok(())
}

pub fn dft(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let Some(mut s) = shape_of(cx, 0) else {
        cx.set_tensor(0, e, None);
        return Ok(());
    };
    let r = s.len();
    if r < 2 {
        return Err(ShapeError("DFT input needs rank >= 2".into()));
    }
    let axis = if cx.opset >= 20 {
        if cx.has_input(2) {
            match cx.ints(2).and_then(|v| v.first().copied()) {
                Some(a) => a,
                None => {
                    cx.set_tensor(0, e, Some(vec![None; r]));
                    return Ok(());
                }
            }
        } else {
            -2
        }
    } else {
        cx.attrs.int_or("axis", 1)
    };
    let ax = if axis < 0 { axis + r as i64 } else { axis };
    if ax < 0 || ax >= r as i64 - 1 {
        return Err(ShapeError(format!("DFT axis {axis} is out of range")));
    }
    let ax = ax as usize;
    let onesided = cx.attrs.int_or("onesided", 0) != 0;
    let inverse = cx.attrs.int_or("inverse", 0) != 0;
    // an inverse of a one-sided spectrum (irfft) rebuilds the full length
    // 2*(n-1) and gives a real signal
    let half_input = onesided && inverse;
    let len: Dim = if cx.has_input(1) {
        cx.value(1).and_then(|v| v.values.first().cloned())
    } else if half_input {
        s[ax]
            .clone()
            .map(|n| n.sub(&Expr::int(1)).mul(&Expr::int(2)))
    } else {
        s[ax].clone()
    };
    s[ax] = if onesided && !inverse {
        len.map(|l| l.floor_div(&Expr::int(2)).add(&Expr::int(1)))
    } else {
        len
    };
    s[r - 1] = Some(Expr::int(if half_input { 1 } else { 2 }));
    cx.set_tensor(0, e, Some(s));
    Ok(())
}

pub fn stft(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let batch = x.as_ref().and_then(|s| s.first().cloned().flatten());
    cx.set_tensor(0, e, Some(vec![batch, None, None, Some(Expr::int(2))]));
    Ok(())
}
