//! `LSTM`: the long short-term memory cell (input, output, forget and cell
//! gates; peepholes; `input_forget`). The engine is [`super::recurrent`].

use super::recurrent::{build, recurrent_shape, Cell};
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    recurrent_shape(cx, 4, 3)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    build(info, Cell::Lstm)
}
