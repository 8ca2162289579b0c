//! Celu: `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`.

use super::float_map::float_kernel;
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub use super::value_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    if alpha == 0.0 {
        bail!("Celu: alpha must not be 0");
    }
    Ok(float_kernel("Celu", move |v| {
        v.max(0.0) + (alpha * (v / alpha).exp_m1()).min(0.0)
    }))
}
