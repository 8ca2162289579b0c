//! `AffineGrid`: the sampling grid of a batch of affine matrices.

use super::resampling::from_f64;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match cx.value(1) {
        Some(v) if v.values.len() == 4 || v.values.len() == 5 => {
            let vals = v.values.clone();
            let mut s: Vec<Dim> = vec![Some(vals[0].clone())];
            s.extend(vals[2..].iter().cloned().map(Some));
            s.push(Some(Expr::int(vals.len() as i64 - 2)));
            Some(s)
        }
        _ => match cx
            .shape(1)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int())
        {
            Some(n @ (4 | 5)) => {
                let mut s: Vec<Dim> = vec![None; n as usize - 1];
                s.push(Some(Expr::int(n - 2)));
                Some(s)
            }
            _ => None,
        },
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

/// Normalised coordinates of `len` points along one axis.
fn grid_line(len: usize, align: bool) -> Vec<f64> {
    (0..len)
        .map(|i| {
            let (i, l) = (i as f64, len as f64);
            if align {
                if len == 1 {
                    -1.0
                } else {
                    -1.0 + 2.0 * i / (l - 1.0)
                }
            } else {
                -1.0 + (2.0 * i + 1.0) / l
            }
        })
        .collect()
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let align = info.attrs.int_or("align_corners", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let theta = tensor_in(ins, 0)?;
        let size = tensor_in(ins, 1)?.to_i64_vec()?;
        if size.iter().any(|&d| d < 0) {
            bail!("size {size:?} has a negative dimension");
        }
        let sr = match size.len() {
            4 => 2,
            5 => 3,
            n => bail!("size must have 4 or 5 elements, got {n}"),
        };
        let n = size[0] as usize;
        if theta.shape() != [n, sr, sr + 1] {
            bail!(
                "theta must be [{n}, {sr}, {}], got {:?}",
                sr + 1,
                theta.shape()
            );
        }
        let sp: Vec<usize> = size[2..].iter().map(|&d| d as usize).collect();
        let total = sp
            .iter()
            .try_fold(n.saturating_mul(sr), |a, &b| a.checked_mul(b))
            .filter(|&t| t <= 1 << 31)
            .ok_or_else(|| KernelError::new("grid is too large"))?;
        let tv = theta
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("theta must be numeric"))?;
        // lines per spatial dim, in (D,) H, W order
        let lines: Vec<Vec<f64>> = sp.iter().map(|&l| grid_line(l, align)).collect();
        let on: usize = sp.iter().product();
        let mut out = Vec::with_capacity(total);
        for b in 0..n {
            let t = &tv[b * sr * (sr + 1)..(b + 1) * sr * (sr + 1)];
            let mut idx = vec![0usize; sr];
            for _ in 0..on {
                // point (x, y[, z]) with x along the last spatial dim
                let mut p: Vec<f64> = (0..sr)
                    .map(|k| lines[sr - 1 - k][idx[sr - 1 - k]])
                    .collect();
                p.push(1.0);
                for row in 0..sr {
                    let r = &t[row * (sr + 1)..(row + 1) * (sr + 1)];
                    out.push(r.iter().zip(&p).map(|(a, b)| a * b).sum());
                }
                for d in (0..sr).rev() {
                    idx[d] += 1;
                    if idx[d] < sp[d] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
        }
        let mut shape = vec![n];
        shape.extend(&sp);
        shape.push(sr);
        Ok(vec![Value::Tensor(from_f64(theta.dtype(), &shape, out)?)])
    }))
}
