//! InstanceNormalization: each (image, channel) plane standardised, then
//! scaled and shifted per channel.

use super::channel_stats::{channel_vec, nc_split, standardize};
use super::float_input::float_in;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};

pub use crate::ops::shape_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "InstanceNormalization")?;
        if x.rank() < 2 {
            bail!("InstanceNormalization needs rank >= 2, got {:?}", x.shape());
        }
        let (n, c, sp) = nc_split(x.shape())?;
        let scale = channel_vec(tensor_in(ins, 1)?, c, "scale")?;
        let bias = channel_vec(tensor_in(ins, 2)?, c, "B")?;
        let mut v = to_f64s(x, "input")?;
        standardize(&mut v, sp, eps);
        for ni in 0..n {
            for ci in 0..c {
                let base = (ni * c + ci) * sp;
                for y in &mut v[base..base + sp] {
                    *y = *y * scale[ci] + bias[ci];
                }
            }
        }
        Ok(vec![from_f64s(x.dtype(), x.shape(), v)?.into()])
    }))
}
