//! `Concat`: the inputs joined along `axis`, with data propagation of
//! small integer tensors.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::{Tensor, Value};
use ndarray::Axis;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let axis = cx
        .attrs
        .int("axis")
        .ok_or_else(|| ShapeError::new("Concat needs the 'axis' attribute"))?;
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
        return Err(ShapeError::new("Concat needs at least one input"));
    };
    let r = first.len();
    let ax = crate::ops::shape_rules::norm_axis(axis, r)?;
    let mut out = first.clone();
    for (i, s) in shapes.iter().enumerate().skip(1) {
        if s.len() != r {
            return Err(ShapeError::new(format!(
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
                    return Err(ShapeError::new(format!(
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

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info
        .attrs
        .int("axis")
        .ok_or_else(|| KernelError::new("Concat needs the 'axis' attribute"))?;
    Ok(Box::new(move |_, ins| {
        let ts: Vec<&Tensor> = (0..ins.len())
            .map(|i| tensor_in(ins, i))
            .collect::<Result<_, _>>()?;
        let Some(first) = ts.first() else {
            bail!("Concat needs at least one input");
        };
        Ok(vec![Value::Tensor(concat_tensors(&ts, axis, first)?)])
    }))
}

/// Concatenates tensors of one type along an axis.
pub fn concat_tensors(ts: &[&Tensor], axis: i64, first: &Tensor) -> Result<Tensor, KernelError> {
    let r = first.rank();
    let ax = crate::ops::kernels::norm_axis(axis, r)?;
    for (i, t) in ts.iter().enumerate() {
        if t.dtype() != first.dtype() {
            bail!("input {i} is {}, input 0 is {}", t.dtype(), first.dtype());
        }
        if t.rank() != r
            || t.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .any(|(k, (a, b))| k != ax && a != b)
        {
            bail!(
                "input {i} of shape {:?} does not match input 0 of shape {:?} outside axis {ax}",
                t.shape(),
                first.shape()
            );
        }
    }
    macro_rules! cat {
        ($a:ident, $variant:ident) => {{
            let views: Vec<_> = ts
                .iter()
                .map(|t| match t {
                    Tensor::$variant(x) => x.view(),
                    _ => unreachable!("types checked above"),
                })
                .collect();
            Tensor::$variant(ndarray::concatenate(Axis(ax), &views)?)
        }};
    }
    Ok(match first {
        Tensor::F32(_) => cat!(a, F32),
        Tensor::F64(_) => cat!(a, F64),
        Tensor::F16(_) => cat!(a, F16),
        Tensor::BF16(_) => cat!(a, BF16),
        Tensor::I8(_) => cat!(a, I8),
        Tensor::I16(_) => cat!(a, I16),
        Tensor::I32(_) => cat!(a, I32),
        Tensor::I64(_) => cat!(a, I64),
        Tensor::U8(_) => cat!(a, U8),
        Tensor::U16(_) => cat!(a, U16),
        Tensor::U32(_) => cat!(a, U32),
        Tensor::U64(_) => cat!(a, U64),
        Tensor::Bool(_) => cat!(a, Bool),
        Tensor::Str(_) => cat!(a, Str),
        Tensor::Small { dtype, .. } => {
            let views: Vec<_> = ts
                .iter()
                .map(|t| match t {
                    Tensor::Small { data, .. } => data.view(),
                    _ => unreachable!("types checked above"),
                })
                .collect();
            Tensor::Small {
                dtype: *dtype,
                data: ndarray::concatenate(Axis(ax), &views)?,
            }
        }
    })
}
