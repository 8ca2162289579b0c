//! `RNN`: the simple recurrent cell, H = f(X·Wᵀ + H·Rᵀ + b). The engine is [`super::recurrent`].

use super::recurrent::{build, recurrent_shape, Cell};
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    recurrent_shape(cx, 1, 2)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    build(info, Cell::Rnn)
}
