//! Rules for Reshape, Transpose, Concat.

use super::{norm_axis, product};
use crate::expr::Expr;
use crate::shape::{Dim, InferCtx, ShapeError, SymValue};

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
        let rank = cx
            .shape(1)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int());
        cx.set_tensor(0, elem, rank.map(|r| vec![None; r.max(0) as usize]));
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
        let shape: Option<Vec<usize>> = cx.shape(0).map(|_| ()).and(cx.input(0).and_then(|_| None));
        let _ = shape;
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
