//! Rules for tensor manipulation and indexing operators, with data
//! propagation of small integer tensors (Shape, Gather, Slice, Concat...).

use super::{norm_axis, product};
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::DataType;
use crate::value_type::Dim;

pub fn reshape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let allowzero = cx.attrs.int_or("allowzero", 0) != 0;
    let target: Option<Vec<Expr>> = if cx.opset < 5 {
        cx.attrs
            .ints("shape")
            .map(|v| v.into_iter().map(Expr::int).collect())
    } else {
        cx.value(1).map(|v| v.values.clone())
    };
    let Some(target) = target else {
        // rank known from the shape input's length
        // rank known from the shape input's length; the sizes depend on data
        let rank = cx
            .shape(1)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int())
            .filter(|r| (0..=64).contains(r));
        let dims = rank.map(|r| (0..r).map(|_| Some(cx.fresh())).collect());
        cx.set_tensor(0, elem, dims);
        return Ok(());
    };
    let input = cx.shape(0).map(|s| s.to_vec());
    let mut out: Vec<Dim> = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, t) in target.iter().enumerate() {
        match t.as_int() {
            Some(-1) => {
                if infer_at.replace(i).is_some() {
                    return Err(ShapeError(format!(
                        "shape has more than one -1: {target:?}"
                    )));
                }
                out.push(None);
            }
            Some(0) if !allowzero => {
                out.push(input.as_ref().and_then(|s| s.get(i).cloned().flatten()))
            }
            Some(v) if v < -1 => {
                return Err(ShapeError(format!("shape has a negative dimension {v}")))
            }
            _ => out.push(Some(t.clone())),
        }
    }
    if let Some(i) = infer_at {
        let total = input.as_deref().and_then(product);
        let known = out
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .try_fold(Expr::int(1), |acc, (_, d)| d.as_ref().map(|e| acc.mul(e)));
        if let (Some(total), Some(known)) = (total, known) {
            if known.as_int() == Some(0) {
                return Err(ShapeError("shape with -1 has a zero dimension".into()));
            }
            if let (Some(t), Some(k)) = (total.as_int(), known.as_int()) {
                if t % k != 0 {
                    return Err(ShapeError(format!(
                        "cannot reshape {t} elements into a shape with known product {k}"
                    )));
                }
            }
            out[i] = Some(total.floor_div(&known));
        }
    } else if let (Some(total), Some(want)) = (input.as_deref().and_then(product), product(&out)) {
        if let (Some(t), Some(w)) = (total.as_int(), want.as_int()) {
            if t != w {
                return Err(ShapeError(format!("cannot reshape {t} elements into {w}")));
            }
        }
    }
    cx.set_tensor(0, elem, Some(out));
    if let Some(v) = cx.value(0).cloned() {
        let n = v.values.len();
        if let Some(Some(dims)) = cx
            .outputs
            .first()
            .and_then(|o| o.as_ref().map(|t| t.shape().map(|s| s.to_vec())))
        {
            let ints: Option<Vec<usize>> = dims
                .iter()
                .map(|d| d.as_ref().and_then(|e| e.as_int()).map(|x| x as usize))
                .collect();
            if let Some(sh) = ints {
                if sh.iter().product::<usize>() == n {
                    cx.set_value(
                        0,
                        SymValue {
                            shape: sh,
                            values: v.values,
                        },
                    );
                }
            }
        }
    }
    Ok(())
}

pub fn transpose(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let perm: Vec<usize> = match cx.attrs.ints("perm") {
        Some(p) => {
            if p.len() != r {
                return Err(ShapeError(format!("perm {p:?} does not match rank {r}")));
            }
            p.iter()
                .map(|&a| norm_axis(a, r))
                .collect::<Result<_, _>>()?
        }
        None => (0..r).rev().collect(),
    };
    cx.set_tensor(
        0,
        elem,
        Some(perm.iter().map(|&a| shape[a].clone()).collect()),
    );
    Ok(())
}

pub fn concat(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let axis = cx
        .attrs
        .int("axis")
        .ok_or_else(|| ShapeError("Concat needs the 'axis' attribute".into()))?;
    let n = cx.num_inputs();
    let mut shapes = Vec::with_capacity(n);
    for i in 0..n {
        match cx.shape(i) {
            Some(s) => shapes.push(s.to_vec()),
            None => {
                let rank = (0..n).find_map(|k| cx.rank(k));
                cx.set_tensor(0, elem, rank.map(|r| vec![None; r]));
                return Ok(());
            }
        }
    }
    let Some(first) = shapes.first() else {
        return Err(ShapeError("Concat needs at least one input".into()));
    };
    let r = first.len();
    let ax = norm_axis(axis, r)?;
    let mut out = first.clone();
    for (i, s) in shapes.iter().enumerate().skip(1) {
        if s.len() != r {
            return Err(ShapeError(format!(
                "input {i} has rank {}, input 0 has rank {r}",
                s.len()
            )));
        }
        for k in 0..r {
            if k == ax {
                out[k] = match (&out[k], &s[k]) {
                    (Some(a), Some(b)) => Some(a.add(b)),
                    _ => None,
                };
            } else if out[k].is_none() {
                out[k] = s[k].clone();
            } else if let (Some(a), Some(b)) = (&out[k], &s[k]) {
                if a.equals(b) == Some(false) {
                    return Err(ShapeError(format!(
                        "input {i} has {b} at axis {k}, input 0 has {a}"
                    )));
                }
            }
        }
    }
    cx.set_tensor(0, elem, Some(out));
    // data propagation of 1-D concatenations
    if r == 1 {
        let vals: Option<Vec<Expr>> = (0..n)
            .map(|i| cx.value(i).map(|v| v.values.clone()))
            .collect::<Option<Vec<_>>>()
            .map(|v| v.concat());
        if let Some(values) = vals {
            cx.set_value(0, SymValue::vector(values));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------

fn dims_of(v: &[Expr]) -> Vec<Dim> {
    v.iter().map(|e| Some(e.clone())).collect()
}

fn int_dim(v: i64) -> Dim {
    Some(Expr::int(v))
}

/// Output 0 has input 0's type and shape.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

/// The integer list given by attribute `name` before `since`, else input `i`
/// (`Err(())` when the input is given but its value is unknown).
fn axes_arg(cx: &InferCtx, name: &str, since: i64, i: usize) -> Result<Option<Vec<i64>>, ()> {
    if cx.opset < since {
        Ok(cx.attrs.ints(name))
    } else if cx.has_input(i) {
        cx.ints(i).map(Some).ok_or(())
    } else {
        Ok(None)
    }
}

pub fn flatten(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, Some(vec![None, None]));
        return Ok(());
    };
    let r = shape.len() as i64;
    let axis = cx.attrs.int_or("axis", 1);
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a > r {
        return Err(ShapeError(format!(
            "axis {axis} is out of range for rank {r}"
        )));
    }
    let (h, t) = shape.split_at(a as usize);
    cx.set_tensor(0, elem, Some(vec![product(h), product(t)]));
    Ok(())
}

/// The length of 1-D input `i` when known.
pub(crate) fn input_len(cx: &InferCtx, i: usize) -> Option<usize> {
    let s = cx.shape(i)?;
    match s {
        [d] => d.as_ref()?.as_int().filter(|&n| n >= 0).map(|n| n as usize),
        _ => None,
    }
}

pub fn squeeze(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Ok(axes) = axes_arg(cx, "axes", 13, 1) else {
        let r = cx
            .rank(0)
            .zip(input_len(cx, 1))
            .and_then(|(r, n)| r.checked_sub(n))
            .map(|r| vec![None; r]);
        cx.set_tensor(0, elem, r);
        return Ok(());
    };
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let out: Vec<Dim> = match axes {
        Some(ax) => {
            let ax: Vec<usize> = ax
                .iter()
                .map(|&a| norm_axis(a, r))
                .collect::<Result<_, _>>()?;
            for &a in &ax {
                if let Some(v) = shape[a].as_ref().and_then(|e| e.as_int()) {
                    if v != 1 {
                        return Err(ShapeError(format!("cannot squeeze axis {a} of size {v}")));
                    }
                }
            }
            shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !ax.contains(i))
                .map(|(_, d)| d.clone())
                .collect()
        }
        None => {
            if shape
                .iter()
                .any(|d| d.as_ref().and_then(|e| e.as_int()).is_none())
            {
                cx.set_tensor(0, elem, None);
                return Ok(());
            }
            shape
                .iter()
                .filter(|d| d.as_ref().and_then(|e| e.as_int()) != Some(1))
                .cloned()
                .collect()
        }
    };
    propagate_reshape(cx, &out);
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

/// Carries input 0's known value to output 0 under a new constant shape.
fn propagate_reshape(cx: &mut InferCtx, out: &[Dim]) {
    let Some(v) = cx.value(0).cloned() else {
        return;
    };
    let sh: Option<Vec<usize>> = out
        .iter()
        .map(|d| {
            d.as_ref()
                .and_then(|e| e.as_int())
                .filter(|&x| x >= 0)
                .map(|x| x as usize)
        })
        .collect();
    if let Some(sh) = sh {
        if sh.iter().product::<usize>() == v.values.len() {
            cx.set_value(
                0,
                SymValue {
                    shape: sh,
                    values: v.values,
                },
            );
        }
    }
}

pub fn unsqueeze(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let axes = match axes_arg(cx, "axes", 13, 1) {
        Ok(Some(a)) => a,
        _ => {
            let n = cx.declared_rank(1)?;
            let r = cx.rank(0).zip(n).map(|(r, n)| vec![None; r + n]);
            cx.set_tensor(0, elem, r);
            return Ok(());
        }
    };
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len() + axes.len();
    let ax: Vec<usize> = axes
        .iter()
        .map(|&a| norm_axis(a, r))
        .collect::<Result<_, _>>()?;
    let mut it = shape.into_iter();
    let out: Vec<Dim> = (0..r)
        .map(|i| {
            if ax.contains(&i) {
                int_dim(1)
            } else {
                it.next().unwrap_or(None)
            }
        })
        .collect();
    propagate_reshape(cx, &out);
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn split(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let n = cx.num_outputs();
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        for i in 0..n {
            cx.set_tensor(i, elem, None);
        }
        return Ok(());
    };
    let ax = norm_axis(cx.attrs.int_or("axis", 0), shape.len())?;
    let sizes: Vec<Dim> = match axes_arg(cx, "split", 13, 1) {
        Err(()) => vec![None; n],
        Ok(Some(s)) => s.into_iter().map(int_dim).collect(),
        Ok(None) => match (&shape[ax], cx.attrs.int("num_outputs")) {
            (Some(d), Some(k)) if k > 0 => {
                let chunk = d.ceil_div(&Expr::int(k));
                (0..k)
                    .map(|i| {
                        if i + 1 < k {
                            Some(chunk.clone())
                        } else {
                            Some(d.sub(&chunk.mul(&Expr::int(k - 1))))
                        }
                    })
                    .collect()
            }
            (Some(d), None) => vec![Some(d.floor_div(&Expr::int(n.max(1) as i64))); n],
            _ => vec![None; n],
        },
    };
    for (i, s) in sizes.into_iter().enumerate().take(n) {
        let mut o = shape.clone();
        o[ax] = s;
        cx.set_tensor(i, elem, Some(o));
    }
    Ok(())
}

/// Symbolic slice length of a dimension for constant start/end/step.
fn slice_len(d: &Dim, start: i64, end: i64, step: i64) -> Dim {
    if step == 0 {
        return None;
    }
    if let Some(n) = d.as_ref().and_then(|e| e.as_int()) {
        let mut s = if start < 0 {
            start.saturating_add(n)
        } else {
            start
        };
        let mut e = if end < 0 { end.saturating_add(n) } else { end };
        let len = if step > 0 {
            s = s.clamp(0, n);
            e = e.clamp(0, n);
            if e > s {
                (e - s + step - 1) / step
            } else {
                0
            }
        } else {
            s = s.clamp(0, (n - 1).max(0));
            e = e.clamp(-1, n - 1);
            if s > e && n > 0 {
                (s - e + (-step) - 1) / (-step)
            } else {
                0
            }
        };
        return int_dim(len);
    }
    // a symbolic dimension: ONNX's clamping written with Min/Max, so the
    // length is exact for every size of the symbol. Starts and ends past
    // 2^31-1 (INT_MAX, INT64_MAX: "to the end") are taken as beyond any
    // dimension.
    let d = d.as_ref()?;
    const BIG: i64 = i32::MAX as i64;
    let int = Expr::int;
    let zero = int(0);
    if step > 0 {
        let s = if start >= 0 {
            // a start past the end gives a non-positive difference below
            int(start.min(BIG))
        } else if start <= -BIG {
            zero.clone()
        } else {
            Expr::max(&d.add(&int(start)), &zero)
        };
        let e = if end >= BIG {
            d.clone()
        } else if end >= 0 {
            Expr::min(&int(end), d)
        } else if end <= -BIG {
            zero.clone()
        } else {
            // no clamp at 0 needed: below it, e - s is negative anyway
            d.add(&int(end))
        };
        let len = e.sub(&s).add(&int(step - 1)).floor_div(&int(step));
        return Some(Expr::max(&len, &zero));
    }
    let k = step.checked_neg()?;
    let last = d.sub(&int(1));
    let s = if start >= BIG {
        last.clone()
    } else if start >= 0 {
        Expr::min(&int(start), &last)
    } else if start <= -BIG {
        zero.clone()
    } else if start == -1 {
        // d-1 is below 0 only for an empty dimension, which stays empty
        last.clone()
    } else {
        Expr::max(&d.add(&int(start)), &zero)
    };
    let e = if end <= -BIG {
        int(-1)
    } else if end < 0 {
        Expr::max(&d.add(&int(end)), &int(-1))
    } else if end >= BIG {
        last.clone()
    } else {
        Expr::min(&int(end), &last)
    };
    let len = s.sub(&e).add(&int(k - 1)).floor_div(&int(k));
    // never more than the dimension (an empty one stays empty)
    Some(Expr::max(&Expr::min(&len, d), &zero))
}

pub fn slice(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let args = if cx.opset < 10 {
        Some((
            cx.attrs.ints("starts"),
            cx.attrs.ints("ends"),
            Ok(cx.attrs.ints("axes")),
            Ok(None),
        ))
    } else {
        Some((
            cx.ints(1),
            cx.ints(2),
            if cx.has_input(3) {
                cx.ints(3).map(Some).ok_or(())
            } else {
                Ok(None)
            },
            if cx.has_input(4) {
                cx.ints(4).map(Some).ok_or(())
            } else {
                Ok(None)
            },
        ))
    };
    let Some((Some(starts), Some(ends), Ok(axes), Ok(steps))) = args else {
        // the sliced sizes depend on data
        let dims = (0..r).map(|_| Some(cx.fresh())).collect();
        cx.set_tensor(0, elem, Some(dims));
        return Ok(());
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(ShapeError(
            "starts, ends, axes and steps must have the same length".into(),
        ));
    }
    let mut out = shape.clone();
    for k in 0..starts.len() {
        let a = norm_axis(axes[k], r)?;
        out[a] = slice_len(&shape[a], starts[k], ends[k], steps[k]);
    }
    // data propagation of 1-D vectors
    if r == 1 && starts.len() == 1 {
        if let Some(v) = cx.value(0).cloned() {
            let idx = crate::ops::slice_indices::slice_indices(
                v.values.len(),
                starts[0],
                ends[0],
                steps[0],
            )
            .map_err(|e| ShapeError(e.0))?;
            let vals: Vec<Expr> = idx.into_iter().map(|i| v.values[i].clone()).collect();
            cx.set_value(0, SymValue::vector(vals));
        }
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn gather(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let (Some(data), Some(ind)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let ax = norm_axis(cx.attrs.int_or("axis", 0), data.len())?;
    let mut out = data[..ax].to_vec();
    out.extend(ind.iter().cloned());
    out.extend(data[ax + 1..].iter().cloned());
    if data.len() == 1 {
        if let (Some(v), Some(ix)) = (cx.value(0).cloned(), cx.value(1).cloned()) {
            let n = v.values.len() as i64;
            let vals: Option<Vec<Expr>> = ix
                .values
                .iter()
                .map(|e| {
                    let i = e.as_int()?;
                    let i = if i < 0 { i + n } else { i };
                    (0..n).contains(&i).then(|| v.values[i as usize].clone())
                })
                .collect();
            if let Some(values) = vals {
                cx.set_value(
                    0,
                    SymValue {
                        shape: ix.shape.clone(),
                        values,
                    },
                );
            }
        }
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn gather_elements(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = cx.shape(1).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn gather_nd(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let b = cx.attrs.int_or("batch_dims", 0).max(0) as usize;
    let (Some(data), Some(ind)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let Some(k) = ind.last().cloned().flatten().and_then(|e| e.as_int()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let k = k.max(0) as usize;
    if b + k > data.len() || ind.is_empty() {
        return Err(ShapeError(format!(
            "indices of depth {k} do not fit data of rank {}",
            data.len()
        )));
    }
    let mut out = ind[..ind.len() - 1].to_vec();
    out.extend(data[b + k..].iter().cloned());
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn expand(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let target = cx.shape_value_or_fresh(1).map(SymValue::vector);
    let (Some(shape), Some(target)) = (cx.shape(0).map(|s| s.to_vec()), target) else {
        let rank = cx.declared_rank(1)?;
        let r0 = cx.rank(0);
        let r = match (rank, r0) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        cx.set_tensor(0, elem, r.map(|r| vec![None; r]));
        return Ok(());
    };
    let t = dims_of(&target.values);
    let out = super::broadcast(&[&shape, &t])?;
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn tile(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let out: Vec<Dim> = match cx.shape_value_or_fresh(1).map(SymValue::vector).as_ref() {
        Some(v) if v.values.len() == shape.len() => shape
            .iter()
            .zip(&v.values)
            .map(|(d, r)| d.as_ref().map(|d| d.mul(r)))
            .collect(),
        Some(v) => {
            return Err(ShapeError(format!(
                "{} repeats for rank {}",
                v.values.len(),
                shape.len()
            )))
        }
        None => vec![None; shape.len()],
    };
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn pad(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let pads: Option<Vec<Expr>> = if cx.opset < 2 {
        cx.attrs
            .ints("paddings")
            .map(|v| v.into_iter().map(Expr::int).collect())
    } else if cx.opset < 11 {
        cx.attrs
            .ints("pads")
            .map(|v| v.into_iter().map(Expr::int).collect())
    } else {
        // pads that depend on data are fresh symbols
        cx.shape_value_or_fresh(1)
    };
    let axes: Option<Vec<usize>> = if cx.opset >= 18 && cx.has_input(3) {
        match cx.ints(3) {
            Some(a) => Some(
                a.iter()
                    .map(|&x| norm_axis(x, r))
                    .collect::<Result<_, _>>()?,
            ),
            None => {
                let dims = (0..r).map(|_| Some(cx.fresh())).collect();
                cx.set_tensor(0, elem, Some(dims));
                return Ok(());
            }
        }
    } else {
        None
    };
    let axes = axes.unwrap_or_else(|| (0..r).collect());
    let Some(pads) = pads else {
        let dims = (0..r).map(|_| Some(cx.fresh())).collect();
        cx.set_tensor(0, elem, Some(dims));
        return Ok(());
    };
    if pads.len() != 2 * axes.len() {
        return Err(ShapeError(format!(
            "{} pads for {} axes",
            pads.len(),
            axes.len()
        )));
    }
    let mut out = shape.clone();
    for (k, &a) in axes.iter().enumerate() {
        out[a] = shape[a]
            .as_ref()
            .map(|d| d.add(&pads[k]).add(&pads[k + axes.len()]));
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn shape_op(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, DataType::Int64, Some(vec![None]));
        return Ok(());
    };
    let r = shape.len() as i64;
    let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let s = clampi(cx.attrs.int_or("start", 0));
    let e = clampi(cx.attrs.int("end").unwrap_or(r));
    let dims: Vec<Dim> = if s < e { shape[s..e].to_vec() } else { vec![] };
    cx.set_tensor(0, DataType::Int64, Some(vec![int_dim(dims.len() as i64)]));
    if let Some(vals) = dims.into_iter().collect::<Option<Vec<Expr>>>() {
        cx.set_value(0, SymValue::vector(vals));
    }
    Ok(())
}

pub fn size(cx: &mut InferCtx) -> Result<(), ShapeError> {
    cx.set_tensor(0, DataType::Int64, Some(vec![]));
    if let Some(n) = cx.shape(0).and_then(product) {
        cx.set_value(0, SymValue::scalar(n));
    }
    Ok(())
}

fn tensor_elem_of(p: &crate::proto::TensorProto) -> DataType {
    DataType::from_code(p.data_type()).unwrap_or(DataType::Undefined)
}

pub fn constant_of_shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let attr = cx.attrs.tensor("value");
    let elem = attr.map(tensor_elem_of).unwrap_or(DataType::Float);
    let fill: Option<Expr> = attr
        .and_then(|p| crate::proto::from_proto(p).ok())
        .filter(|t| t.dtype().is_int())
        .and_then(|t| t.to_i64_vec().ok())
        .and_then(|v| v.first().copied())
        .map(Expr::int);
    let fill = if attr.is_none() { None } else { fill };
    let known = cx.value(0).cloned();
    let target = known
        .clone()
        .or_else(|| cx.shape_value_or_fresh(0).map(SymValue::vector));
    match target {
        Some(v) => {
            let dims = dims_of(&v.values);
            let fill = if known.is_some() { fill } else { None };
            if let (Some(f), Some(sh)) = (fill, v.ints()) {
                let n = sh
                    .iter()
                    .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) });
                if let Some(n) = n.filter(|n| sh.len() <= 1 && (0..=64).contains(n)) {
                    cx.set_value(
                        0,
                        SymValue {
                            shape: sh.iter().map(|&d| d as usize).collect(),
                            values: vec![f; n as usize],
                        },
                    );
                }
            }
            cx.set_tensor(0, elem, Some(dims));
        }
        None => {
            let r = cx.declared_rank(0)?;
            cx.set_tensor(0, elem, r.map(|r| vec![None; r]));
        }
    }
    Ok(())
}

pub fn constant(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let t = crate::ops::constant_value::constant_value(&cx.attrs).map_err(|e| ShapeError(e.0))?;
    let dims: Vec<Dim> = t.shape().iter().map(|&d| int_dim(d as i64)).collect();
    if let Some(v) = SymValue::of_tensor(&t) {
        cx.set_value(0, v);
    }
    cx.set_tensor(0, t.dtype(), Some(dims));
    Ok(())
}

pub fn range(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let get = |i: usize| cx.value(i).and_then(|v| v.values.first().cloned());
    let (s, l, d) = (get(0), get(1), get(2));
    let dim = match (&s, &l, &d) {
        (Some(s), Some(l), Some(d)) => match d.as_int() {
            Some(0) => return Err(ShapeError("Range delta is 0".into())),
            Some(dv) if dv > 0 => Some(l.sub(s).ceil_div(d)),
            Some(_) => Some(s.sub(l).ceil_div(&d.neg())),
            None => None,
        },
        _ => None,
    };
    // a constant empty range has length 0, not a negative one
    let dim = dim.map(|e| match e.as_int() {
        Some(v) if v < 0 => Expr::int(0),
        _ => e,
    });
    // bounds that depend on data give a data-dependent length
    let dim = Some(dim.unwrap_or_else(|| cx.fresh()));
    if let (Some(s), Some(d), Some(n)) = (&s, &d, dim.as_ref().and_then(|e| e.as_int())) {
        if (0..=1024).contains(&n) {
            let vals = (0..n).map(|i| s.add(&d.mul(&Expr::int(i)))).collect();
            cx.set_value(0, SymValue::vector(vals));
        }
    }
    cx.set_tensor(0, elem, Some(vec![dim]));
    Ok(())
}

pub fn one_hot(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(2)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let depth = cx.value(1).and_then(|v| v.values.first().cloned());
    let ax = norm_axis(cx.attrs.int_or("axis", -1), shape.len() + 1)?;
    let mut out = shape;
    out.insert(ax, depth);
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn eye_like(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.attrs.int("dtype") {
        Some(c) => {
            DataType::from_code(c as i32).ok_or_else(|| ShapeError(format!("unknown dtype {c}")))?
        }
        None => cx.elem_req(0)?,
    };
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn compress(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let n = cx.fresh();
    match cx.attrs.int("axis") {
        None => cx.set_tensor(0, elem, Some(vec![Some(n)])),
        Some(a) => {
            let Some(mut shape) = cx.shape(0).map(|s| s.to_vec()) else {
                cx.set_tensor(0, elem, None);
                return Ok(());
            };
            let ax = norm_axis(a, shape.len())?;
            shape[ax] = Some(n);
            cx.set_tensor(0, elem, Some(shape));
        }
    }
    Ok(())
}

pub fn non_zero(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let r = cx.rank(0).map(|r| int_dim(r as i64)).unwrap_or(None);
    let n = cx.fresh();
    cx.set_tensor(0, DataType::Int64, Some(vec![r, Some(n)]));
    Ok(())
}

pub fn unique(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let u = cx.fresh();
    let (y, m): (Option<Vec<Dim>>, Dim) = match cx.attrs.int("axis") {
        None => (Some(vec![Some(u.clone())]), cx.shape(0).and_then(product)),
        Some(a) => match cx.shape(0).map(|s| s.to_vec()) {
            Some(mut s) => {
                let ax = norm_axis(a, s.len())?;
                let m = s[ax].clone();
                s[ax] = Some(u.clone());
                (Some(s), m)
            }
            None => (None, None),
        },
    };
    cx.set_tensor(0, elem, y);
    cx.set_tensor(1, DataType::Int64, Some(vec![Some(u.clone())]));
    cx.set_tensor(2, DataType::Int64, Some(vec![m]));
    cx.set_tensor(3, DataType::Int64, Some(vec![Some(u)]));
    Ok(())
}

pub fn top_k(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(mut shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        cx.set_tensor(1, DataType::Int64, None);
        return Ok(());
    };
    let ax = norm_axis(cx.attrs.int_or("axis", -1), shape.len())?;
    let k = if cx.opset < 10 {
        cx.attrs.int("k").map(Expr::int)
    } else {
        cx.value(1).and_then(|v| v.values.first().cloned())
    };
    shape[ax] = k;
    cx.set_tensor(0, elem, Some(shape.clone()));
    cx.set_tensor(1, DataType::Int64, Some(shape));
    Ok(())
}

pub fn depth_to_space(cx: &mut InferCtx) -> Result<(), ShapeError> {
    space_depth(cx, true)
}

pub fn space_to_depth(cx: &mut InferCtx) -> Result<(), ShapeError> {
    space_depth(cx, false)
}

fn space_depth(cx: &mut InferCtx, to_space: bool) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let b = cx
        .attrs
        .int("blocksize")
        .filter(|&b| b > 0)
        .ok_or_else(|| ShapeError("a positive 'blocksize' is required".into()))?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, Some(vec![None; 4]));
        return Ok(());
    };
    if shape.len() != 4 {
        return Err(ShapeError(format!("expected rank 4, got {}", shape.len())));
    }
    let be = Expr::int(b);
    let b2 = Expr::int(b * b);
    let f = |d: &Dim, g: &dyn Fn(&Expr) -> Expr| d.as_ref().map(g);
    let out = if to_space {
        vec![
            shape[0].clone(),
            f(&shape[1], &|e| e.floor_div(&b2)),
            f(&shape[2], &|e| e.mul(&be)),
            f(&shape[3], &|e| e.mul(&be)),
        ]
    } else {
        vec![
            shape[0].clone(),
            f(&shape[1], &|e| e.mul(&b2)),
            f(&shape[2], &|e| e.floor_div(&be)),
            f(&shape[3], &|e| e.floor_div(&be)),
        ]
    };
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::expr::Expr;

    /// The symbolic slice length equals the constant one for every size,
    /// start, end and step in a grid (ends and starts past 2^31-1 included).
    #[test]
    fn symbolic_slice_lengths_are_exact() {
        let big = [i64::MAX, i32::MAX as i64, -(i32::MAX as i64), i64::MIN + 1];
        let mut bounds: Vec<i64> = (-7..=7).collect();
        bounds.extend(big);
        let n = Expr::sym("n");
        for step in [-3, -2, -1, 1, 2, 3] {
            for &start in &bounds {
                for &end in &bounds {
                    let sym = super::slice_len(&Some(n.clone()), start, end, step)
                        .expect("a symbolic length");
                    for d in 0..=9i64 {
                        let want = super::slice_len(&Some(Expr::int(d)), start, end, step)
                            .and_then(|e| e.as_int())
                            .unwrap();
                        let b: crate::expr::Bindings = [("n".to_string(), d)].into_iter().collect();
                        assert_eq!(
                            sym.eval(&b).unwrap(),
                            want,
                            "n={d} start={start} end={end} step={step}: {sym}"
                        );
                    }
                }
            }
        }
    }
}
