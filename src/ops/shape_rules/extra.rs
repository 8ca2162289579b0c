//! Rules for the remaining operators: losses, signal processing, strings,
//! CumProd, BitCast, CenterCropPad, Det, MaxUnpool, AffineGrid, Col2Im,
//! and training optimisers.

use super::norm_axis;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::Dim;

fn int_dim(v: i64) -> Dim {
    if v >= 0 {
        Some(Expr::int(v))
    } else {
        None
    }
}

fn shape_of(cx: &InferCtx, i: usize) -> Option<Vec<Dim>> {
    cx.shape(i).map(|s| s.to_vec())
}

/// Output 0 has the element type and shape of input 0.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let s = shape_of(cx, 0);
    cx.set_tensor(0, e, s);
    Ok(())
}

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

pub fn bit_cast(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let to = cx
        .attrs
        .int("to")
        .ok_or_else(|| ShapeError("BitCast needs attribute 'to'".into()))?;
    let dt =
        DataType::from_code(to as i32).ok_or_else(|| ShapeError(format!("unknown type {to}")))?;
    let s = shape_of(cx, 0);
    cx.set_tensor(0, dt, s);
    Ok(())
}

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

pub fn dynamic_quantize_linear(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    cx.set_tensor(0, DataType::Uint8, s);
    cx.set_tensor(1, DataType::Float, Some(vec![]));
    cx.set_tensor(2, DataType::Uint8, Some(vec![]));
    Ok(())
}

pub fn max_unpool(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    if cx.has_input(2) {
        let s = cx
            .value(2)
            .map(|v| v.values.iter().cloned().map(Some).collect());
        let s = match s {
            Some(s) => Some(s),
            None => cx.declared_rank(2)?.map(|n| vec![None; n]),
        };
        cx.set_tensor(0, e, s);
        return Ok(());
    }
    let ks = cx.attrs.ints("kernel_shape").unwrap_or_default();
    let nsp = ks.len();
    let pads = cx.attrs.ints("pads").unwrap_or_else(|| vec![0; 2 * nsp]);
    let st = cx.attrs.ints("strides").unwrap_or_else(|| vec![1; nsp]);
    let out = shape_of(cx, 0).and_then(|x| {
        if x.len() != nsp + 2 || pads.len() != 2 * nsp || st.len() != nsp {
            return None;
        }
        let mut o = x[..2].to_vec();
        for i in 0..nsp {
            o.push(x[i + 2].as_ref().map(|d| {
                d.sub(&Expr::int(1))
                    .mul(&Expr::int(st[i]))
                    .add(&Expr::int(ks[i] - pads[i] - pads[i + nsp]))
            }));
        }
        Some(o)
    });
    cx.set_tensor(0, e, out);
    Ok(())
}

pub fn col2im(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let img = cx.value(1).map(|v| v.values.clone());
    let blk = cx.ints(2);
    let out = match (x, img) {
        (Some(x), Some(img)) if x.len() == 3 => {
            let c = match (&x[1], blk) {
                (Some(d), Some(b)) => Some(d.floor_div(&Expr::int(b.iter().product()))),
                _ => None,
            };
            let mut o = vec![x[0].clone(), c];
            o.extend(img.into_iter().map(Some));
            Some(o)
        }
        _ => None,
    };
    cx.set_tensor(0, e, out);
    Ok(())
}

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

pub fn string_concat(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => Some(super::broadcast(&[a, b])?),
        _ => None,
    };
    cx.set_tensor(0, DataType::String, s);
    Ok(())
}

pub fn string_split(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    let y = s.clone().map(|mut v| {
        v.push(None);
        v
    });
    cx.set_tensor(0, DataType::String, y);
    cx.set_tensor(1, DataType::Int64, s);
    Ok(())
}

pub fn regex_full_match(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    cx.set_tensor(0, DataType::Bool, s);
    Ok(())
}

pub fn tfidf_vectorizer(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n = cx
        .attrs
        .ints("ngram_indexes")
        .map(|v| v.iter().copied().max().unwrap_or(-1) + 1);
    let x = shape_of(cx, 0);
    let out = x.map(|s| {
        let mut o = if s.len() == 2 {
            vec![s[0].clone()]
        } else {
            vec![]
        };
        o.push(n.and_then(int_dim));
        o
    });
    cx.set_tensor(0, DataType::Float, out);
    Ok(())
}

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
