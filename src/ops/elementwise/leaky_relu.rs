//! LeakyRelu: `x` where non-negative, `alpha * x` elsewhere.

use super::float_map::float_kernel_f32;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub use super::value_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 0.01);
    let a64 = alpha as f64;
    Ok(float_kernel_f32(
        "LeakyRelu",
        move |v: f32| if v < 0.0 { alpha * v } else { v },
        move |v: f64| if v < 0.0 { a64 * v } else { v },
    ))
}
