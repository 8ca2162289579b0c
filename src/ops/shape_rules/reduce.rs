//! Rules for reductions (ReduceSum... ReduceSumSquare) and ArgMax/ArgMin.

use super::norm_axis;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::Dim;

/// Output shape of a reduction: reduced axes become 1 (keepdims) or vanish.
fn reduced(shape: &[Dim], mask: &[bool], keep: bool) -> Vec<Dim> {
    shape
        .iter()
        .zip(mask)
        .filter_map(|(d, &m)| {
            if m {
                keep.then(|| Some(Expr::int(1)))
            } else {
                Some(d.clone())
            }
        })
        .collect()
}

pub fn reduce(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let keep = cx.attrs.int_or("keepdims", 1) != 0;
    let noop = cx.attrs.int_or("noop_with_empty_axes", 0) != 0;
    let since = if cx.node.op_type() == "ReduceSum" {
        13
    } else {
        18
    };
    let from_input = cx.opset >= since;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let axes: Option<Vec<i64>> = if from_input {
        if cx.has_input(1) {
            match cx.ints(1) {
                Some(v) => Some(v),
                None => {
                    // axes unknown: only the rank is known when keepdims
                    let known_empty = cx
                        .shape(1)
                        .and_then(|s| s.first().cloned().flatten())
                        .and_then(|e| e.as_int())
                        == Some(0);
                    if !known_empty {
                        let n = super::manip::input_len(cx, 1);
                        // which axes are reduced depends on data: each
                        // size is a fresh symbol (the input size or 1)
                        let k = if keep {
                            Some(r)
                        } else {
                            n.and_then(|n| r.checked_sub(n))
                        };
                        let out = k.map(|k| (0..k).map(|_| Some(cx.fresh())).collect());
                        cx.set_tensor(0, elem, out);
                        return Ok(());
                    }
                    Some(vec![])
                }
            }
        } else {
            None
        }
    } else {
        cx.attrs.ints("axes")
    };
    let mask = match axes {
        Some(ax) if !ax.is_empty() => {
            let mut m = vec![false; r];
            for a in ax {
                m[norm_axis(a, r)?] = true;
            }
            m
        }
        _ => {
            if noop && from_input {
                cx.set_tensor(0, elem, Some(shape));
                return Ok(());
            }
            vec![true; r]
        }
    };
    cx.set_tensor(0, elem, Some(reduced(&shape, &mask, keep)));
    Ok(())
}

pub fn arg(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let keep = cx.attrs.int_or("keepdims", 1) != 0;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, DataType::Int64, None);
        return Ok(());
    };
    let ax = norm_axis(cx.attrs.int_or("axis", 0), shape.len())?;
    let mask: Vec<bool> = (0..shape.len()).map(|i| i == ax).collect();
    cx.set_tensor(0, DataType::Int64, Some(reduced(&shape, &mask, keep)));
    Ok(())
}
