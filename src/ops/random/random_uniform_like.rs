//! `RandomUniformLike`: uniform draws of the input's shape.

use super::generator::generator;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub(super) use super::generator::like_shape as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    generator(info, true, false)
}
