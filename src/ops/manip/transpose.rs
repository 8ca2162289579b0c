//! `Transpose`: the axes permuted by `perm` (reversed by default); block
//! swaps take the tiled path of [`super::transpose_tiled`].

use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;
use crate::{bail, map_array};
use ndarray::IxDyn;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let perm: Vec<usize> = match cx.attrs.ints("perm") {
        Some(p) => {
            if p.len() != r {
                return Err(ShapeError::new(format!(
                    "perm {p:?} does not match rank {r}"
                )));
            }
            p.iter()
                .map(|&a| crate::ops::shape_rules::norm_axis(a, r))
                .collect::<Result<_, _>>()?
        }
        None => (0..r).rev().collect(),
    };
    cx.set_tensor(
        0,
        elem,
        Some(perm.iter().map(|&a| shape[a].clone()).collect()),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let perm = info.attrs.ints("perm");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let r = x.rank();
        let perm: Vec<usize> = match &perm {
            Some(p) => {
                if p.len() != r {
                    bail!("perm {p:?} does not match rank {r}");
                }
                let mut seen = vec![false; r];
                let mut out = Vec::with_capacity(r);
                for &a in p {
                    let a = crate::ops::kernels::norm_axis(a, r)?;
                    if seen[a] {
                        bail!("perm {p:?} repeats axis {a}");
                    }
                    seen[a] = true;
                    out.push(a);
                }
                out
            }
            None => (0..r).rev().collect(),
        };
        let out_shape: Vec<usize> = perm.iter().map(|&a| x.shape()[a]).collect();
        let block = super::transpose_tiled::as_block_swap(x.shape(), &perm);
        Ok(vec![Value::Tensor(map_array!(x, a => {
            let tiled = block.zip(a.as_slice()).and_then(|(dims, s)| {
                super::transpose_tiled::transpose(s, dims, &out_shape)
            });
            match tiled {
                Some(t) => t,
                None => a
                    .view()
                    .permuted_axes(IxDyn(&perm))
                    .as_standard_layout()
                    .into_owned(),
            }
        }))])
    }))
}
