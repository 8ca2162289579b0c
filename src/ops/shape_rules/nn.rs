//! Rules for neural-network operators: softmax-like and normalisation ops
//! (same shape as the input), Dropout, pooling and convolutions (symbolic
//! output sizes).

use super::norm_axis;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::DataType;
use crate::value_type::Dim;

/// Output 0 has input 0's type and shape.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

/// Softmax / LogSoftmax / Hardmax: same as the input, with an axis check.
pub fn softmax(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(r) = cx.rank(0) {
        let def = if cx.opset < 13 { 1 } else { -1 };
        let axis = cx.attrs.int_or("axis", def);
        if r > 0 && !(cx.opset < 13 && axis == r as i64) {
            norm_axis(axis, r)?;
        }
    }
    same_as_input(cx)
}

fn channels(cx: &InferCtx) -> Dim {
    cx.shape(0).and_then(|s| {
        if s.len() == 1 {
            Some(Some(Expr::int(1)))
        } else {
            s.get(1).cloned()
        }
    })?
}

pub fn batch_norm(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    let c = channels(cx);
    for o in 1..cx.num_outputs() {
        let src = if o % 2 == 1 { 3 } else { 4 };
        let elem = cx.elem(src).or(cx.elem(0)).unwrap_or(DataType::Float);
        cx.set_tensor(o, elem, Some(vec![c.clone()]));
    }
    Ok(())
}

pub fn layer_norm(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    let elem = match cx.attrs.int_or("stash_type", 1) {
        1 => DataType::Float,
        11 => DataType::Double,
        10 => DataType::Float16,
        16 => DataType::Bfloat16,
        _ => cx.elem_req(0)?,
    };
    let stat = match cx.shape(0) {
        Some(s) => {
            let a = norm_axis(cx.attrs.int_or("axis", -1), s.len())?;
            let mut v: Vec<Dim> = s[..a].to_vec();
            v.resize(s.len(), Some(Expr::int(1)));
            Some(v)
        }
        None => None,
    };
    for o in 1..cx.num_outputs().min(3) {
        cx.set_tensor(o, elem, stat.clone());
    }
    Ok(())
}

pub fn dropout(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    if cx.num_outputs() > 1 {
        let elem = if cx.opset >= 10 {
            DataType::Bool
        } else {
            cx.elem_req(0)?
        };
        let shape = cx.shape(0).map(|s| s.to_vec());
        cx.set_tensor(1, elem, shape);
    }
    Ok(())
}

pub fn global_pool(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match cx.shape(0) {
        Some(s) if s.len() >= 2 => {
            let mut v = s[..2].to_vec();
            v.resize(s.len(), Some(Expr::int(1)));
            Some(v)
        }
        Some(s) => shape_bail!("global pooling needs rank >= 2, got {}", s.len()),
        None => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

fn ints_or(cx: &InferCtx, name: &str, n: usize, def: i64) -> Result<Vec<i64>, ShapeError> {
    match cx.attrs.ints(name) {
        None => Ok(vec![def; n]),
        Some(v) if v.len() == n => Ok(v),
        Some(v) => shape_bail!("{name} has {} values for {n} spatial axes", v.len()),
    }
}

/// Output spatial sizes of a pooling / convolution window.
fn window_out(cx: &InferCtx, spatial: &[Dim], kernel: &[i64]) -> Result<Vec<Dim>, ShapeError> {
    let n = spatial.len();
    if kernel.len() != n {
        shape_bail!(
            "the kernel has {} axes, the input {n} spatial axes",
            kernel.len()
        );
    }
    let s = ints_or(cx, "strides", n, 1)?;
    let d = ints_or(cx, "dilations", n, 1)?;
    let pads = ints_or(cx, "pads", 2 * n, 0)?;
    if s.iter().chain(&d).any(|&v| v < 1) || kernel.iter().any(|&v| v < 1) {
        shape_bail!("strides, dilations and kernel sizes must be positive");
    }
    let auto = cx.attrs.string_or("auto_pad", "NOTSET");
    let ceil = cx.attrs.int_or("ceil_mode", 0) != 0;
    let mut out = vec![];
    for i in 0..n {
        let Some(h) = &spatial[i] else {
            out.push(None);
            continue;
        };
        let ext = (kernel[i] - 1) * d[i] + 1;
        let st = Expr::int(s[i]);
        let o = match auto.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => h.ceil_div(&st),
            "VALID" => h.sub(&Expr::int(ext)).floor_div(&st).add(&Expr::int(1)),
            "NOTSET" | "" => {
                let (pb, pe) = (pads[i], pads[i + n]);
                let span = h.add(&Expr::int(pb + pe - ext));
                if ceil {
                    let mut o = span.ceil_div(&st).add(&Expr::int(1));
                    if let (Some(ov), Some(hv)) = (o.as_int(), h.as_int()) {
                        if (ov - 1) * s[i] >= hv + pb {
                            o = Expr::int(ov - 1);
                        }
                    }
                    o
                } else {
                    span.floor_div(&st).add(&Expr::int(1))
                }
            }
            other => shape_bail!("unknown auto_pad '{other}'"),
        };
        if o.as_int().is_some_and(|v| v < 1) {
            shape_bail!("the window does not fit spatial axis {i}");
        }
        out.push(Some(o));
    }
    Ok(out)
}

pub fn pool(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(s) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        if cx.num_outputs() > 1 {
            cx.set_tensor(1, DataType::Int64, None);
        }
        return Ok(());
    };
    if s.len() < 3 {
        shape_bail!(
            "pooling needs an N x C x D1 ... input, got rank {}",
            s.len()
        );
    }
    let Some(k) = cx.attrs.ints("kernel_shape") else {
        shape_bail!("kernel_shape is required");
    };
    let mut shape = s[..2].to_vec();
    shape.extend(window_out(cx, &s[2..], &k)?);
    cx.set_tensor(0, elem, Some(shape.clone()));
    if cx.num_outputs() > 1 {
        cx.set_tensor(1, DataType::Int64, Some(shape));
    }
    Ok(())
}

/// The kernel sizes of a convolution: the attribute, else W's spatial dims.
fn conv_kernel(cx: &InferCtx, w: Option<&[Dim]>) -> Option<Vec<i64>> {
    cx.attrs.ints("kernel_shape").or_else(|| {
        w.and_then(|w| {
            w.get(2..).map(|d| {
                d.iter()
                    .map(|e| e.as_ref().and_then(|e| e.as_int()))
                    .collect()
            })
        })
        .flatten()
    })
}

fn conv_like(cx: &mut InferCtx, elem: DataType) -> Result<(), ShapeError> {
    let x = cx.shape(0).map(|s| s.to_vec());
    let w = cx.shape(1).map(|s| s.to_vec());
    let shape = match (&x, &w) {
        (Some(x), Some(w)) => {
            if x.len() < 3 || x.len() != w.len() {
                shape_bail!("Conv needs X of rank >= 3 and W of the same rank");
            }
            let mut shape = vec![x[0].clone(), w[0].clone()];
            match conv_kernel(cx, Some(w)) {
                Some(k) => shape.extend(window_out(cx, &x[2..], &k)?),
                None => shape.extend(std::iter::repeat_n(None, x.len() - 2)),
            }
            Some(shape)
        }
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn conv(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    conv_like(cx, elem)
}

pub fn conv_integer(cx: &mut InferCtx) -> Result<(), ShapeError> {
    conv_like(cx, DataType::Int32)
}

pub fn qlinear_conv(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(7)?;
    let x = cx.shape(0).map(|s| s.to_vec());
    let w = cx.shape(3).map(|s| s.to_vec());
    let shape = match (&x, &w) {
        (Some(x), Some(w)) => {
            if x.len() < 3 || x.len() != w.len() {
                shape_bail!("QLinearConv needs x of rank >= 3 and w of the same rank");
            }
            let mut shape = vec![x[0].clone(), w[0].clone()];
            match conv_kernel(cx, Some(w)) {
                Some(k) => shape.extend(window_out(cx, &x[2..], &k)?),
                None => shape.extend(std::iter::repeat_n(None, x.len() - 2)),
            }
            Some(shape)
        }
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn conv_transpose(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let (Some(x), Some(w)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    if x.len() < 3 || x.len() != w.len() {
        shape_bail!("ConvTranspose needs X of rank >= 3 and W of the same rank");
    }
    let n = x.len() - 2;
    let group = cx.attrs.int_or("group", 1);
    let m = w[1].as_ref().map(|e| e.mul(&Expr::int(group)));
    let mut shape = vec![x[0].clone(), m];
    if let Some(os) = cx.attrs.ints("output_shape") {
        if os.len() != n {
            shape_bail!("output_shape has {} values for {n} spatial axes", os.len());
        }
        shape.extend(os.iter().map(|&v| Some(Expr::int(v))));
    } else {
        let k = conv_kernel(cx, Some(&w));
        let s = ints_or(cx, "strides", n, 1)?;
        let d = ints_or(cx, "dilations", n, 1)?;
        let op = ints_or(cx, "output_padding", n, 0)?;
        let pads = ints_or(cx, "pads", 2 * n, 0)?;
        let auto = cx.attrs.string_or("auto_pad", "NOTSET");
        for i in 0..n {
            let (Some(h), Some(k)) = (&x[i + 2], &k) else {
                shape.push(None);
                continue;
            };
            let st = Expr::int(s[i]);
            if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
                shape.push(Some(h.mul(&st)));
            } else {
                let ext = (k[i] - 1) * d[i] + 1;
                let o = h
                    .sub(&Expr::int(1))
                    .mul(&st)
                    .add(&Expr::int(op[i] + ext - pads[i] - pads[i + n]));
                shape.push(Some(o));
            }
        }
    }
    cx.set_tensor(0, elem, Some(shape));
    Ok(())
}
