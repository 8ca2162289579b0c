//! `Unsqueeze` (opset 13 form, older ones are upgraded by
//! `graph::upgrade`): the input with size-1 axes inserted at input `axes`.

use super::axes_input::axes_arg;
use super::squeeze::propagate_reshape;
use super::symbolic_dims::int_dim;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{ints_in, norm_axes, out1};
use crate::ops::shape_rules::norm_axis;
use crate::ops::{InferCtx, ShapeError};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let axes = match axes_arg(cx, 1) {
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

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let _ = info;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axes = ints_in(ins, 1)?;
        let r = x.rank() + axes.len();
        let ax = norm_axes(&axes, r)?;
        let mut it = x.shape().iter();
        let shape: Vec<usize> = (0..r)
            .map(|i| {
                if ax.contains(&i) {
                    1
                } else {
                    it.next().copied().unwrap_or(1)
                }
            })
            .collect();
        out1(x.reshape(&shape)?)
    }))
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
    fn unsqueeze_negative_axes() {
        let u = run(kernel, 13, vec![], vec![v1(&[7, 8]), v1(&[0, -1])], 1).unwrap();
        assert_eq!(u[0].shape(), &[1, 2, 1]);
    }
}
