//! Rules for the image operators: Resize, Upsample, NonMaxSuppression,
//! RoiAlign, GridSample, AffineGrid.

use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::Dim;

fn resize_shape(
    cx: &mut InferCtx,
    scales: Option<Vec<f64>>,
    sizes: Option<Vec<Expr>>,
    sizes_given: bool,
) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let axes: Vec<usize> = match cx.attrs.ints("axes") {
        Some(a) => a
            .iter()
            .map(|&x| super::norm_axis(x, r))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    let mut out = shape.clone();
    if let Some(s) = scales.filter(|s| !s.is_empty()) {
        if s.len() != axes.len() {
            return Err(ShapeError(format!(
                "scales has {} values, {} axes are resized",
                s.len(),
                axes.len()
            )));
        }
        for (&a, &v) in axes.iter().zip(&s) {
            if v.is_nan() || v <= 0.0 {
                return Err(ShapeError(format!("scale {v} must be positive")));
            }
            out[a] = match &shape[a] {
                Some(d) => match d.as_int() {
                    Some(n) => Some(Expr::int((n as f64 * v).floor() as i64)),
                    None if v.fract() == 0.0 => Some(d.mul(&Expr::int(v as i64))),
                    None => Some(cx.fresh()),
                },
                None => None,
            };
        }
    } else if let Some(z) = sizes.filter(|z| !z.is_empty()) {
        if z.len() != axes.len() {
            return Err(ShapeError(format!(
                "sizes has {} values, {} axes are resized",
                z.len(),
                axes.len()
            )));
        }
        let policy = cx.attrs.string_or("keep_aspect_ratio_policy", "stretch");
        let z_ints: Option<Vec<i64>> = z.iter().map(|e| e.as_int()).collect();
        if policy == "stretch" {
            // sizes may be symbolic: computed from other shapes
            for (&a, v) in axes.iter().zip(&z) {
                out[a] = Some(v.clone());
            }
        } else {
            let ins: Option<Vec<i64>> = axes
                .iter()
                .map(|&a| shape[a].as_ref().and_then(|e| e.as_int()))
                .collect();
            match ins.zip(z_ints) {
                Some((ins, z)) => {
                    let ratios = ins
                        .iter()
                        .zip(&z)
                        .map(|(&i, &v)| v as f64 / i.max(1) as f64);
                    let s = if policy == "not_larger" {
                        ratios.fold(f64::INFINITY, f64::min)
                    } else {
                        ratios.fold(0.0, f64::max)
                    };
                    for (&a, &i) in axes.iter().zip(&ins) {
                        out[a] = Some(Expr::int((s * i as f64 + 0.5).floor() as i64));
                    }
                }
                None => {
                    for &a in &axes {
                        out[a] = Some(cx.fresh());
                    }
                }
            }
        }
    } else if sizes_given {
        // sizes given but unknown: the rank stays, the resized dims are data-dependent
        let n = cx
            .shape(3)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int());
        for &a in &axes {
            out[a] = if n.is_some() { Some(cx.fresh()) } else { None };
        }
    } else {
        for &a in &axes {
            out[a] = None;
        }
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

fn const_floats(cx: &InferCtx, i: usize) -> Option<Vec<f64>> {
    cx.ints(i)
        .map(|v| v.into_iter().map(|x| x as f64).collect())
}

pub fn resize(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if cx.opset < 11 {
        let s = const_floats(cx, 1);
        return resize_shape(cx, s, None, false);
    }
    let scales = if cx.has_input(2) {
        const_floats(cx, 2)
    } else {
        None
    };
    let sizes = if cx.has_input(3) {
        cx.value(3).map(|v| v.values.clone())
    } else {
        None
    };
    let sizes_given = cx.has_input(3);
    resize_shape(cx, scales, sizes, sizes_given)
}

pub fn upsample(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = if cx.opset < 9 {
        cx.attrs
            .floats("scales")
            .map(|v| v.into_iter().map(|x| x as f64).collect())
    } else {
        const_floats(cx, 1)
    };
    resize_shape(cx, s, None, false)
}

pub fn non_max_suppression(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n = cx.fresh();
    cx.set_tensor(0, DataType::Int64, Some(vec![Some(n), Some(Expr::int(3))]));
    Ok(())
}

pub fn roi_align(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let nr = cx.shape(1).and_then(|s| s.first().cloned()).flatten();
    let c = cx.shape(0).and_then(|s| s.get(1).cloned()).flatten();
    let oh = cx.attrs.int_or("output_height", 1);
    let ow = cx.attrs.int_or("output_width", 1);
    cx.set_tensor(
        0,
        elem,
        Some(vec![nr, c, Some(Expr::int(oh)), Some(Expr::int(ow))]),
    );
    Ok(())
}

pub fn grid_sample(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let (Some(x), Some(g)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        let r = cx.rank(0).or(cx.rank(1));
        cx.set_tensor(0, elem, r.map(|r| vec![None; r]));
        return Ok(());
    };
    if x.len() < 3 || g.len() != x.len() {
        return Err(ShapeError(format!(
            "X of rank {} and grid of rank {} do not match",
            x.len(),
            g.len()
        )));
    }
    let mut out = vec![x[0].clone().or(g[0].clone()), x[1].clone()];
    out.extend(g[1..g.len() - 1].iter().cloned());
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn affine_grid(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match cx.value(1) {
        Some(v) if v.values.len() == 4 || v.values.len() == 5 => {
            let vals = v.values.clone();
            let mut s: Vec<Dim> = vec![Some(vals[0].clone())];
            s.extend(vals[2..].iter().cloned().map(Some));
            s.push(Some(Expr::int(vals.len() as i64 - 2)));
            Some(s)
        }
        _ => match cx
            .shape(1)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int())
        {
            Some(n @ (4 | 5)) => {
                let mut s: Vec<Dim> = vec![None; n as usize - 1];
                s.push(Some(Expr::int(n - 2)));
                Some(s)
            }
            _ => None,
        },
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}
