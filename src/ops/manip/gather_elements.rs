//! `GatherElements`: elements picked along `axis` by an index tensor of
//! the data's rank.

use super::index_positions::element_positions;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{gather_flat, out1};
use crate::ops::kernels::norm_axis;
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = cx.shape(1).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let ax = norm_axis(axis, x.rank())?;
        let pos = element_positions(x.shape(), it.shape(), &it.to_i64_vec()?, ax)?;
        out1(gather_flat(x, &pos, it.shape())?)
    }))
}
