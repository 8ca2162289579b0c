//! `Split` (opset 13 form and later; older ones are upgraded by
//! `graph::upgrade`): the input cut along `axis` into the sizes input
//! `split` lists, or
//! into `num_outputs` (or as many as outputs) near-equal parts.

use super::axes_input::axes_arg;
use super::symbolic_dims::int_dim;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::opt_ints_in;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;
use crate::value_type::Dim;
use crate::{bail, map_array};
use ndarray::Axis;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let n = cx.num_outputs();
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        for i in 0..n {
            cx.set_tensor(i, elem, None);
        }
        return Ok(());
    };
    let ax = crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", 0), shape.len())?;
    let sizes: Vec<Dim> = match axes_arg(cx, 1) {
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

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let num_outputs = info.attrs.int("num_outputs");
    let n_out = info.node.output.len();
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let ax = crate::ops::kernels::norm_axis(axis, x.rank())?;
        let sp = opt_ints_in(ins, 1)?;
        let sizes = split_sizes(x.shape()[ax], sp.as_deref(), n_out, num_outputs)?;
        let mut outs = Vec::with_capacity(sizes.len());
        let mut start = 0usize;
        for s in sizes {
            let end = start + s;
            outs.push(Value::Tensor(map_array!(x, a => a
                .slice_axis(Axis(ax), ndarray::Slice::from(start..end))
                .to_owned())));
            start = end;
        }
        Ok(outs)
    }))
}

/// The sizes of Split's outputs.
pub fn split_sizes(
    dim: usize,
    split: Option<&[i64]>,
    n_out: usize,
    num_outputs: Option<i64>,
) -> Result<Vec<usize>, KernelError> {
    if let Some(s) = split {
        if s.iter().any(|&v| v < 0) {
            bail!("split {s:?} has a negative size");
        }
        let total: i64 = s.iter().fold(0i64, |a, &b| a.saturating_add(b));
        if total != dim as i64 {
            bail!("split {s:?} does not sum to the axis size {dim}");
        }
        return Ok(s.iter().map(|&v| v as usize).collect());
    }
    if let Some(n) = num_outputs {
        if n <= 0 {
            bail!("num_outputs must be positive, got {n}");
        }
        let n = n as usize;
        let chunk = dim.div_ceil(n);
        let mut out = Vec::with_capacity(n);
        let mut left = dim;
        for _ in 0..n {
            let c = chunk.min(left);
            out.push(c);
            left -= c;
        }
        return Ok(out);
    }
    if n_out == 0 || !dim.is_multiple_of(n_out) {
        bail!("axis size {dim} cannot be split evenly into {n_out} outputs");
    }
    Ok(vec![dim / n_out; n_out])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn split_into_num_outputs_and_checked_sizes() {
        let s = run(
            kernel,
            18,
            vec![int("num_outputs", 3)],
            vec![v1(&[1, 2, 3, 4, 5])],
            3,
        )
        .unwrap();
        assert_eq!(s.iter().map(|t| t.len()).collect::<Vec<_>>(), vec![2, 2, 1]);
        assert!(run(kernel, 13, vec![], vec![v1(&[1, 2, 3]), v1(&[1, 1])], 2).is_err());
    }
}
