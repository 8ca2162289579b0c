//! `RandomUniform`: draws in [low, high) of the `shape` attribute.

use super::generator::generator;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub(super) use super::generator::fixed_shape as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    generator(info, false, false)
}
