//! `ScatterND`: the data with slices at index tuples replaced or combined
//! (`reduction`).

use super::index_positions::nd_positions;
use super::scatter_reduction::{reduction, scatter_apply};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::out1;
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};

/// Output 0 has input 0's type and shape.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let red = reduction(info)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let u = tensor_in(ins, 2)?;
        let (starts, slice, grid) = nd_positions(x.shape(), it, 0)?;
        let k = it.shape()[it.rank() - 1];
        let mut want = grid;
        want.extend_from_slice(&x.shape()[k..]);
        if u.shape() != want.as_slice() {
            bail!("updates shape {:?}, expected {want:?}", u.shape());
        }
        let pos: Vec<usize> = starts.iter().flat_map(|&s| s..s + slice).collect();
        out1(scatter_apply(x, u, &pos, red)?)
    }))
}
