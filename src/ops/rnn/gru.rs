//! `GRU`: the gated recurrent unit (update, reset and hidden gates;
//! `linear_before_reset`). The engine is [`super::recurrent`].

use super::recurrent::{build, recurrent_shape, Cell};
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    recurrent_shape(cx, 3, 2)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    build(info, Cell::Gru)
}
