//! Conv: N-D with groups, strides, dilations and pads, on the engine of
//! [`crate::ops::kernels::conv`] (whose fused form the plan's passes use).

use super::window_shape::conv_like;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::conv::conv_fused;
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    conv_like(cx, elem)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    conv_fused(info, None)
}
