//! `HammingWindow`: a − (1 − a)·cos(2πi/N), a = 25/46.

use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use std::f64::consts::PI;

pub use super::window::shape;
use super::window::window_kernel;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    window_kernel(info, |i, n| {
        let a = 25.0 / 46.0;
        a - (1.0 - a) * (2.0 * PI * i / n).cos()
    })
}
