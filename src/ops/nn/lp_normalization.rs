//! LpNormalization: each vector along `axis` divided by its L1 or L2 norm.

use super::float_input::float_in;
use super::softmax_family::soft_split;
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};

pub use crate::ops::shape_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -1);
    let p = info.attrs.int_or("p", 2);
    if p != 1 && p != 2 {
        bail!("LpNormalization supports p = 1 or 2, got {p}");
    }
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "LpNormalization")?;
        let (outer, len, inner) = soft_split(x.shape(), axis, 13)?;
        let mut v = to_f64s(x, "input")?;
        for o in 0..outer {
            for i in 0..inner {
                let base = o * len * inner + i;
                let idx = |j: usize| base + j * inner;
                let norm = if p == 1 {
                    (0..len).map(|j| v[idx(j)].abs()).sum::<f64>()
                } else {
                    (0..len).map(|j| v[idx(j)].powi(2)).sum::<f64>().sqrt()
                };
                for j in 0..len {
                    v[idx(j)] = if norm == 0.0 { 0.0 } else { v[idx(j)] / norm };
                }
            }
        }
        Ok(vec![from_f64s(x.dtype(), x.shape(), v)?.into()])
    }))
}
