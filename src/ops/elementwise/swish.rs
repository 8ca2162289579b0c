//! Swish: `x * sigmoid(alpha * x)`.

use super::float_map::float_kernel;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::scalar_math::sigmoid;

pub use super::value_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(float_kernel("Swish", move |v| v * sigmoid(alpha * v)))
}
