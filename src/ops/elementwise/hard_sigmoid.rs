//! HardSigmoid: `max(0, min(1, alpha * x + beta))`.

use super::float_map::float_kernel_f32;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub use super::value_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 0.2);
    let beta = info.attrs.float_or("beta", 0.5);
    let (a64, b64) = (alpha as f64, beta as f64);
    Ok(float_kernel_f32(
        "HardSigmoid",
        move |v: f32| (alpha * v + beta).clamp(0.0, 1.0),
        move |v: f64| (a64 * v + b64).clamp(0.0, 1.0),
    ))
}
