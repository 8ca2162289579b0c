//! `SplitToSequence`: a tensor split along `axis` into a sequence: into
//! single slices (`keepdims` says whether the axis stays), equal chunks of a
//! scalar `split`, or the sizes a 1-D `split` lists.

use super::sequence_value::{seq, set_seq};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::axis_slices::{take_index, take_range};
use crate::ops::{InferCtx, ShapeError};
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        set_seq(cx, 0, TypeInfo::Tensor { elem, shape: None });
        return Ok(());
    };
    let ax = crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", 0), shape.len())?;
    let keepdims = cx.attrs.int_or("keepdims", 1) != 0;
    let mut out = shape.clone();
    if !cx.has_input(1) {
        if keepdims {
            out[ax] = Some(Expr::int(1));
        } else {
            out.remove(ax);
        }
    } else {
        let split = cx.ints(1);
        let scalar = cx.rank(1) == Some(0);
        out[ax] = match split {
            Some(v) if scalar => {
                // chunks of v[0], the last possibly smaller
                let n = shape[ax].as_ref().and_then(|e| e.as_int());
                match (v.first(), n) {
                    (Some(&c), Some(n)) if c > 0 && n % c == 0 => Some(Expr::int(c)),
                    _ => None,
                }
            }
            Some(v) if !v.is_empty() && v.iter().all(|&d| d == v[0]) => Some(Expr::int(v[0])),
            _ => None,
        };
    }
    set_seq(
        cx,
        0,
        TypeInfo::Tensor {
            elem,
            shape: Some(out),
        },
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let keepdims = info.attrs.int_or("keepdims", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let ax = crate::ops::kernels::norm_axis(axis, x.rank())?;
        let n = x.shape()[ax];
        let mut items = vec![];
        match opt_tensor_in(ins, 1)? {
            None => {
                for i in 0..n {
                    let t = if keepdims {
                        take_range(x, ax, i, i + 1)?
                    } else {
                        take_index(x, ax, i)?
                    };
                    items.push(t);
                }
            }
            Some(s) => {
                let v = s.to_i64_vec()?;
                let sizes: Vec<usize> = if s.rank() == 0 {
                    let c = v[0];
                    if c <= 0 {
                        bail!("split size {c} must be positive");
                    }
                    let c = c as usize;
                    let mut out = vec![c; n / c];
                    if n % c != 0 {
                        out.push(n % c);
                    }
                    out
                } else {
                    if v.iter().any(|&d| d < 0) {
                        bail!("split {v:?} has a negative size");
                    }
                    let total: i64 = v.iter().fold(0i64, |a, &b| a.saturating_add(b));
                    if total != n as i64 {
                        bail!("split {v:?} sums to {total}, axis {ax} has {n}");
                    }
                    v.iter().map(|&d| d as usize).collect()
                };
                let mut start = 0;
                for sz in sizes {
                    items.push(take_range(x, ax, start, start + sz)?);
                    start += sz;
                }
            }
        }
        Ok(vec![seq(x.dtype(), items)])
    }))
}
