//! The output sizes of windowed operators (pooling, convolutions) as
//! symbolic dimensions, from their kernel, strides, dilations and pads.

use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::DataType;
use crate::value_type::Dim;

pub(super) fn ints_or(
    cx: &InferCtx,
    name: &str,
    n: usize,
    def: i64,
) -> Result<Vec<i64>, ShapeError> {
    match cx.attrs.ints(name) {
        None => Ok(vec![def; n]),
        Some(v) if v.len() == n => Ok(v),
        Some(v) => shape_bail!("{name} has {} values for {n} spatial axes", v.len()),
    }
}

/// Output spatial sizes of a pooling / convolution window.
pub(super) fn window_out(
    cx: &InferCtx,
    spatial: &[Dim],
    kernel: &[i64],
) -> Result<Vec<Dim>, ShapeError> {
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

/// The kernel sizes of a convolution: the attribute, else W's spatial dims.
pub(super) fn conv_kernel(cx: &InferCtx, w: Option<&[Dim]>) -> Option<Vec<i64>> {
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

/// A convolution's output (elements `elem`): N x M x the window's output
/// sizes, from X (input 0) and W (input 1).
pub(super) fn conv_like(cx: &mut InferCtx, elem: DataType) -> Result<(), ShapeError> {
    conv_output(cx, elem, 0, 1)
}

/// A convolution's output from X at input `xi` and W at input `wi`.
pub(super) fn conv_output(
    cx: &mut InferCtx,
    elem: DataType,
    xi: usize,
    wi: usize,
) -> Result<(), ShapeError> {
    let x = cx.shape(xi).map(|s| s.to_vec());
    let w = cx.shape(wi).map(|s| s.to_vec());
    let shape = match (&x, &w) {
        (Some(x), Some(w)) => {
            if x.len() < 3 || x.len() != w.len() {
                shape_bail!(
                    "{} needs X of rank >= 3 and W of the same rank",
                    cx.node.op_type()
                );
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
