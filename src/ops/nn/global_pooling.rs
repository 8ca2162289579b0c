//! GlobalAveragePool and GlobalMaxPool: one value per (image, channel)
//! plane. One file with a module per operator.

use super::channel_stats::nc_split;
use super::float_input::float_in;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::Kernel;
use crate::ops::kernels::f64_values::{from_f64s, interleaved_sum, to_f64s};
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::Tensor;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match cx.shape(0) {
        Some(s) if s.len() >= 2 => {
            let mut v = s[..2].to_vec();
            v.resize(s.len(), Some(Expr::int(1)));
            Some(v)
        }
        Some(s) => shape_bail!("global pooling needs rank >= 2, got {}", s.len()),
        None => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

/// The largest of a slice, NaN left out (-inf when empty or all NaN), in
/// eight interleaved running maxima the compiler vectorises.
fn max_f32(s: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 8];
    let mut blocks = s.chunks_exact(8);
    for c in &mut blocks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = a.max(v);
        }
    }
    let m = blocks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    acc.iter().fold(m, |m, &v| m.max(v))
}

fn global_kernel(max: bool) -> Kernel {
    Box::new(move |_, ins| {
        let x = float_in(ins, 0, "global pooling")?;
        let sh = x.shape().to_vec();
        if sh.len() < 2 {
            bail!("global pooling needs rank >= 2, got {sh:?}");
        }
        let (n, c, sp) = nc_split(&sh)?;
        let mut oshape = sh[..2].to_vec();
        oshape.resize(sh.len(), 1);
        // float32 in place: no f64 copy of the input, sums still in f64
        if let Tensor::F32(a) = x {
            if let Some(v) = a.as_slice() {
                let y: Vec<f32> = (0..n * c)
                    .map(|i| {
                        let s = &v[i * sp..(i + 1) * sp];
                        if max {
                            max_f32(s)
                        } else {
                            (interleaved_sum(s, |e| e as f64) / sp.max(1) as f64) as f32
                        }
                    })
                    .collect();
                return Ok(vec![Tensor::from_vec(&oshape, y)?.into()]);
            }
        }
        let v = to_f64s(x, "X")?;
        let mut y = Vec::with_capacity(n * c);
        for i in 0..n * c {
            let s = &v[i * sp..(i + 1) * sp];
            y.push(if max {
                s.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            } else {
                s.iter().sum::<f64>() / sp.max(1) as f64
            });
        }
        Ok(vec![from_f64s(x.dtype(), &oshape, y)?.into()])
    })
}

pub mod global_average_pool {
    pub use super::shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(super::global_kernel(false))
    }
}

pub mod global_max_pool {
    pub use super::shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(super::global_kernel(true))
    }
}
