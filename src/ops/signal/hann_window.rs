//! `HannWindow`: 0.5 − 0.5·cos(2πi/N).

use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use std::f64::consts::PI;

pub use super::window::shape;
use super::window::window_kernel;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    window_kernel(info, |i, n| 0.5 - 0.5 * (2.0 * PI * i / n).cos())
}
