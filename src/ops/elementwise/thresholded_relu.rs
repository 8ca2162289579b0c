//! ThresholdedRelu: `x` where greater than `alpha`, 0 elsewhere.

use super::float_map::float_kernel;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub use super::value_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(float_kernel("ThresholdedRelu", move |v| {
        if v > alpha {
            v
        } else {
            0.0
        }
    }))
}
