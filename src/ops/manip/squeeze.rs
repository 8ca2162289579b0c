//! `Squeeze` (opset 13 form, older ones are upgraded by `graph::upgrade`):
//! the input without its size-1 axes (those of input `axes`, else all).

use super::axes_input::axes_arg;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{norm_axes, opt_ints_in, out1};
use crate::ops::shape_rules::manip::input_len;
use crate::ops::shape_rules::norm_axis;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Ok(axes) = axes_arg(cx, 1) else {
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
                        return Err(ShapeError::new(format!(
                            "cannot squeeze axis {a} of size {v}"
                        )));
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

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let _ = info;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axes = opt_ints_in(ins, 1)?;
        let r = x.rank();
        let shape: Vec<usize> = match axes {
            Some(ax) => {
                let ax = norm_axes(&ax, r)?;
                for &a in &ax {
                    if x.shape()[a] != 1 {
                        bail!("cannot squeeze axis {a} of size {}", x.shape()[a]);
                    }
                }
                x.shape()
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !ax.contains(i))
                    .map(|(_, &d)| d)
                    .collect()
            }
            None => x.shape().iter().copied().filter(|&d| d != 1).collect(),
        };
        out1(x.reshape(&shape)?)
    }))
}

/// Carries input 0's known value to output 0 under a new constant shape.
pub(super) fn propagate_reshape(cx: &mut InferCtx, out: &[Dim]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn squeeze_of_a_longer_axis_fails() {
        assert!(run(kernel, 13, vec![], vec![v1(&[7, 8]), v1(&[0])], 1).is_err());
    }
}
