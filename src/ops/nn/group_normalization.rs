//! GroupNormalization: channels standardised in groups, then scaled and
//! shifted per channel.

use super::channel_stats::{nc_split, standardize};
use super::float_input::float_in;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};

pub use crate::ops::shape_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let groups = info.attrs.int_or("num_groups", 0);
    if groups <= 0 {
        bail!("GroupNormalization needs a positive num_groups, got {groups}");
    }
    let g = groups as usize;
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "GroupNormalization")?;
        if x.rank() < 2 {
            bail!("GroupNormalization needs rank >= 2, got {:?}", x.shape());
        }
        let (n, c, sp) = nc_split(x.shape())?;
        if c % g != 0 {
            bail!("{c} channels are not divisible into {g} groups");
        }
        let s = to_f64s(tensor_in(ins, 1)?, "scale")?;
        let b = to_f64s(tensor_in(ins, 2)?, "bias")?;
        let per = |v: Vec<f64>, what: &str| -> Result<Vec<f64>, KernelError> {
            if v.len() == c {
                Ok(v)
            } else if v.len() == g {
                Ok((0..c).map(|ci| v[ci / (c / g)]).collect())
            } else {
                bail!("{what} has {} elements, expected {c} or {g}", v.len())
            }
        };
        let (scale, bias) = (per(s, "scale")?, per(b, "bias")?);
        let mut v = to_f64s(x, "X")?;
        standardize(&mut v, (c / g) * sp, eps);
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
