//! `Tile`: the input repeated `repeats[i]` times along each axis.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{gather_axes, ints_in, out1};
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
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
            return Err(ShapeError::new(format!(
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

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let reps = ints_in(ins, 1)?;
        if reps.len() != x.rank() {
            bail!("repeats {reps:?} do not match rank {}", x.rank());
        }
        let mut out_shape = Vec::with_capacity(reps.len());
        for (a, (&d, &r)) in x.shape().iter().zip(&reps).enumerate() {
            if r < 0 {
                bail!("negative repeat {r}");
            }
            let n = d.checked_mul(r as usize).ok_or_else(|| {
                KernelError::new(format!("axis {a}: {d} repeated {r} times overflows"))
            })?;
            out_shape.push(n);
        }
        // the output and one source position per element
        crate::tensor::budget::check(&out_shape, x.dtype().alloc_bytes() + 8)?;
        let lists: Vec<Vec<usize>> = out_shape
            .iter()
            .zip(x.shape())
            .map(|(&n, &d)| (0..n).map(|i| i % d.max(1)).collect())
            .collect();
        out1(gather_axes(x, &lists)?)
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
    fn tile_repeats() {
        let x = Some(i64s(&[2, 1], vec![1, 2]));
        let t = run(kernel, 13, vec![], vec![x, v1(&[2, 2])], 1).unwrap();
        assert_eq!(t[0], i64s(&[4, 2], vec![1, 1, 2, 2, 1, 1, 2, 2]));
    }
}
