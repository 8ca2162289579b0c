//! HardSwish: `x * max(0, min(1, x / 6 + 1/2))`.

use super::float_map::float_kernel_f32;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub use super::value_rules::same_as_input as shape;

/// The spec: x * max(0, min(1, alpha * x + beta)), alpha = 1/6, beta = 0.5
/// (float32 inputs in float32, as the attributes are).
pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(float_kernel_f32(
        "HardSwish",
        |v: f32| v * (v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0),
        |v: f64| v * (v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0),
    ))
}
