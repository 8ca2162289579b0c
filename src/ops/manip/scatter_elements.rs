//! `ScatterElements` (and the older `Scatter`): the data with elements at
//! index positions along `axis` replaced or combined (`reduction`).

use super::index_positions::element_positions;
use super::scatter_reduction::{reduction, scatter_apply};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::out1;
use crate::ops::kernels::norm_axis;
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};

/// Output 0 has input 0's type and shape.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let red = reduction(info)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let u = tensor_in(ins, 2)?;
        if u.shape() != it.shape() {
            bail!(
                "updates shape {:?} differs from indices shape {:?}",
                u.shape(),
                it.shape()
            );
        }
        let ax = norm_axis(axis, x.rank())?;
        let pos = element_positions(x.shape(), it.shape(), &it.to_i64_vec()?, ax)?;
        out1(scatter_apply(x, u, &pos, red)?)
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
    fn scatter_elements_reduction_and_bounds() {
        let data = v1(&[1, 1, 1]);
        let idx = v1(&[0, 0, 2]);
        let upd = v1(&[2, 3, 5]);
        let y = run(
            kernel,
            18,
            vec![string("reduction", "mul")],
            vec![data.clone(), idx, upd.clone()],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[3], vec![6, 1, 5]));
        let bad = run(kernel, 18, vec![], vec![data, v1(&[0, 3, 1]), upd], 1);
        assert!(bad.is_err());
    }
}
