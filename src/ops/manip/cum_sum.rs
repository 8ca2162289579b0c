//! `CumSum`: running sums along an axis (`exclusive`, `reverse`).

use super::cumulative::{cumulative, Cumulative};
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};

/// Output 0 has input 0's type and shape.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    cumulative(info, Cumulative::Sum)
}
