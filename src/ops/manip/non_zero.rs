//! `NonZero`: the indices of the non-zero elements, one row per axis.

use super::symbolic_dims::int_dim;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{for_each_index, out1};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let r = cx.rank(0).map(|r| int_dim(r as i64)).unwrap_or(None);
    let n = cx.fresh();
    cx.set_tensor(0, DataType::Int64, Some(vec![r, Some(n)]));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let nz: Vec<bool> = match x.string_values() {
            Some(s) => s.iter().map(|v| !v.is_empty()).collect(),
            None => x
                .to_f64_vec()
                .ok_or_else(|| KernelError::new("NonZero needs numbers"))?
                .iter()
                .map(|&v| v != 0.0)
                .collect(),
        };
        let r = x.rank();
        let mut coords: Vec<Vec<i64>> = vec![vec![]; r];
        let mut k = 0usize;
        let mut count = 0usize;
        for_each_index(x.shape(), |ix| {
            if nz[k] {
                for (a, &i) in ix.iter().enumerate() {
                    coords[a].push(i as i64);
                }
                count += 1;
            }
            k += 1;
        });
        let count = if r == 0 {
            usize::from(nz.first() == Some(&true))
        } else {
            count
        };
        let flat: Vec<i64> = coords.concat();
        out1(Tensor::from_vec(&[r, count], flat)?)
    }))
}
