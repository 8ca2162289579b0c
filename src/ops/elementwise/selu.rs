//! Selu: `gamma * x` where positive, `gamma * alpha * (exp(x) - 1)` elsewhere.

use super::float_map::float_kernel;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub use super::value_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.673_263_2) as f64;
    let gamma = info.attrs.float_or("gamma", 1.050_701) as f64;
    Ok(float_kernel("Selu", move |v| {
        if v <= 0.0 {
            gamma * alpha * v.exp_m1()
        } else {
            gamma * v
        }
    }))
}
