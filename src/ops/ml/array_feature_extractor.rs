//! `ArrayFeatureExtractor`: selects elements of the last axis of `X` by the
//! indices in `Y` (`[..., C]` → `[..., len(Y)]`; rank 1 gives `[1, len(Y)]`).

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{gather_flat, ints_in};
use crate::ops::shape_rules::product;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let n = cx.shape(1).and_then(product);
    let out = cx.shape(0).map(|s| {
        let mut o = if s.len() <= 1 {
            vec![Some(Expr::int(1))]
        } else {
            s[..s.len() - 1].to_vec()
        };
        o.push(n);
        o
    });
    cx.set_tensor(0, e, out);
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let idx = ints_in(ins, 1)?;
        let sh = x.shape().to_vec();
        let Some(&last) = sh.last() else {
            bail!("X must have rank >= 1");
        };
        let idx: Vec<usize> = idx
            .iter()
            .map(|&i| {
                if i < 0 || i as usize >= last {
                    bail!("index {i} is out of range for the last axis of size {last}")
                } else {
                    Ok(i as usize)
                }
            })
            .collect::<Result<_, _>>()?;
        let rows: usize = sh[..sh.len() - 1].iter().product();
        let mut flat = Vec::with_capacity(rows * idx.len());
        for r in 0..rows {
            for &i in &idx {
                flat.push(r * last + i);
            }
        }
        let mut out_shape = if sh.len() == 1 {
            vec![1]
        } else {
            sh[..sh.len() - 1].to_vec()
        };
        out_shape.push(idx.len());
        let xs = x.to_standard();
        Ok(vec![Value::Tensor(gather_flat(&xs, &flat, &out_shape)?)])
    }))
}
