//! LRN: local response normalisation across neighbouring channels.

use super::channel_stats::nc_split;
use super::float_input::float_in;
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};

pub use crate::ops::shape_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1e-4) as f64;
    let beta = info.attrs.float_or("beta", 0.75) as f64;
    let bias = info.attrs.float_or("bias", 1.0) as f64;
    let size = info.attrs.int_or("size", 0);
    if size <= 0 {
        bail!("LRN needs a positive size, got {size}");
    }
    let size = size as usize;
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "LRN")?;
        if x.rank() < 2 {
            bail!("LRN needs rank >= 2, got {:?}", x.shape());
        }
        let (n, c, sp) = nc_split(x.shape())?;
        let v = to_f64s(x, "X")?;
        let mut y = vec![0.0; v.len()];
        let lo = (size - 1) / 2;
        let hi = size - 1 - lo;
        for ni in 0..n {
            for ci in 0..c {
                let c0 = ci.saturating_sub(lo);
                let c1 = (ci + hi).min(c - 1);
                for s in 0..sp {
                    let sq: f64 = (c0..=c1).map(|k| v[(ni * c + k) * sp + s].powi(2)).sum();
                    let i = (ni * c + ci) * sp + s;
                    y[i] = v[i] / (bias + alpha / size as f64 * sq).powf(beta);
                }
            }
        }
        Ok(vec![from_f64s(x.dtype(), x.shape(), y)?.into()])
    }))
}
