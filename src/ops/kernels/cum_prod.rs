//! CumProd.

use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

pub fn cum_prod(info: &NodeInfo) -> Result<Kernel, KernelError> {
    super::manip::cumulative(info, super::manip::Cumulative::Prod)
}
