//! MaxPool, AveragePool and LpPool: N-D windows with pads, strides,
//! dilations and `ceil_mode`; MaxPool's optional indices. f32 NCHW windows
//! without dilation take [`super::pool_2d_f32`]. One file with a module per
//! operator: they differ in what a window computes.

use super::window_shape::window_out;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::checked_size;
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::kernels::sliding_window::{next_index, Window, WindowAttrs};
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::{DataType, Tensor, Value};
use ndarray::{ArrayD, IxDyn};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(s) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        if cx.num_outputs() > 1 {
            cx.set_tensor(1, DataType::Int64, None);
        }
        return Ok(());
    };
    if s.len() < 3 {
        shape_bail!(
            "pooling needs an N x C x D1 ... input, got rank {}",
            s.len()
        );
    }
    let Some(k) = cx.attrs.ints("kernel_shape") else {
        shape_bail!("kernel_shape is required");
    };
    let mut shape = s[..2].to_vec();
    shape.extend(window_out(cx, &s[2..], &k)?);
    cx.set_tensor(0, elem, Some(shape.clone()));
    if cx.num_outputs() > 1 {
        cx.set_tensor(1, DataType::Int64, Some(shape));
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum PoolKind {
    Max,
    Avg { include_pad: bool },
    Lp(i64),
}

/// Pools every (n, c) plane; returns the values and (for Max) the flat
/// argmax indices into the input.
fn pool_compute(
    kind: PoolKind,
    x: &[f64],
    shape: &[usize],
    w: &Window,
    storage_order: i64,
) -> (Vec<f64>, Vec<i64>) {
    let (n, c) = (shape[0], shape[1]);
    let sp = &shape[2..];
    let nd = sp.len();
    let plane: usize = sp.iter().product();
    let oplane: usize = w.out.iter().product();
    let mut y = Vec::with_capacity(n * c * oplane);
    let mut ind = Vec::new();
    let mut o = vec![0usize; nd];
    let mut kk = vec![0usize; nd];
    for nc in 0..n * c {
        let base = nc * plane;
        o.iter_mut().for_each(|v| *v = 0);
        for _ in 0..oplane {
            let mut best = f64::NEG_INFINITY;
            let mut best_i: i64 = -1;
            let mut acc = 0.0;
            let mut cnt = 0usize;
            let mut padcnt = 0usize;
            kk.iter_mut().for_each(|v| *v = 0);
            loop {
                let mut inside = true;
                let mut in_padded = true;
                let mut flat = 0usize;
                let mut cm = 0usize;
                let mut cm_stride = 1usize;
                for i in 0..nd {
                    let p = (o[i] * w.strides[i] + kk[i] * w.dilations[i]) as isize
                        - w.pad_begin[i] as isize;
                    if p < 0 || p >= sp[i] as isize {
                        inside = false;
                        if p < -(w.pad_begin[i] as isize) || p >= (sp[i] + w.pad_end[i]) as isize {
                            in_padded = false;
                        }
                    } else {
                        flat = flat * sp[i] + p as usize;
                        cm += p as usize * cm_stride;
                        cm_stride *= sp[i];
                    }
                }
                if in_padded {
                    padcnt += 1;
                }
                if inside {
                    let v = x[base + flat];
                    cnt += 1;
                    match kind {
                        PoolKind::Max => {
                            if v > best || best_i < 0 {
                                best = v;
                                best_i = if storage_order == 1 {
                                    (base + cm) as i64
                                } else {
                                    (base + flat) as i64
                                };
                            }
                        }
                        PoolKind::Avg { .. } => acc += v,
                        PoolKind::Lp(p) => acc += v.abs().powi(p as i32),
                    }
                }
                if !next_index(&mut kk, &w.kernel) {
                    break;
                }
            }
            match kind {
                PoolKind::Max => {
                    y.push(if best_i < 0 { f64::NEG_INFINITY } else { best });
                    ind.push(best_i.max(0));
                }
                PoolKind::Avg { include_pad } => {
                    let d = if include_pad { padcnt } else { cnt };
                    y.push(if d == 0 { 0.0 } else { acc / d as f64 });
                }
                PoolKind::Lp(p) => y.push(acc.powf(1.0 / p as f64)),
            }
            next_index(&mut o, &w.out);
        }
    }
    (y, ind)
}

fn pool_kernel(info: &NodeInfo, kind: PoolKind) -> Result<Kernel, KernelError> {
    let wa = WindowAttrs::from_info(info);
    let storage_order = info.attrs.int_or("storage_order", 0);
    let nout = info.node.output.len();
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let sh = x.shape().to_vec();
        if sh.len() < 3 {
            bail!("pooling needs an N x C x D1 ... input, got {sh:?}");
        }
        let int8 = matches!(x.dtype(), DataType::Int8 | DataType::Uint8);
        if !(x.dtype().is_standard_float() || kind == PoolKind::Max && int8) {
            bail!("pooling does not accept {}", x.dtype());
        }
        let w = wa.resolve(&sh[2..], None)?;
        let mut oshape = sh[..2].to_vec();
        oshape.extend(&w.out);
        checked_size(&oshape)?;
        if let (Tensor::F32(a), 4, 1) = (x, sh.len(), nout) {
            let fast = match kind {
                PoolKind::Max => Some(super::pool_2d_f32::Pool2dKind::Max),
                PoolKind::Avg { include_pad } => {
                    Some(super::pool_2d_f32::Pool2dKind::Avg { include_pad })
                }
                PoolKind::Lp(_) => None,
            };
            if let Some(k) = fast.filter(|_| w.dilations.iter().all(|&d| d == 1)) {
                let g = super::pool_2d_f32::Pool2d {
                    h: sh[2],
                    w: sh[3],
                    kernel: [w.kernel[0], w.kernel[1]],
                    strides: [w.strides[0], w.strides[1]],
                    pad_begin: [w.pad_begin[0], w.pad_begin[1]],
                    pad_end: [w.pad_end[0], w.pad_end[1]],
                    out: [w.out[0], w.out[1]],
                };
                let xs = a.as_standard_layout();
                let data = xs
                    .as_slice()
                    .ok_or_else(|| KernelError::new("pooling input layout"))?;
                let y = super::pool_2d_f32::pool2d_f32(data, sh[0] * sh[1], &g, k);
                return Ok(vec![Tensor::F32(ArrayD::from_shape_vec(
                    IxDyn(&oshape),
                    y,
                )?)
                .into()]);
            }
        }
        let v = to_f64s(x, "X")?;
        let (y, ind) = pool_compute(kind, &v, &sh, &w, storage_order);
        let mut outs: Vec<Value> = vec![from_f64s(x.dtype(), &oshape, y)?.into()];
        if nout > 1 && kind == PoolKind::Max {
            outs.push(Tensor::I64(ArrayD::from_shape_vec(IxDyn(&oshape), ind)?).into());
        }
        Ok(outs)
    }))
}

pub mod max_pool {
    pub use super::shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
        super::pool_kernel(info, super::PoolKind::Max)
    }
}

pub mod average_pool {
    pub use super::shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
        let include_pad = info.attrs.int_or("count_include_pad", 0) != 0;
        super::pool_kernel(info, super::PoolKind::Avg { include_pad })
    }
}

pub mod lp_pool {
    pub use super::shape;
    use crate::bail;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
        let p = info.attrs.int_or("p", 2);
        if !(1..=64).contains(&p) {
            bail!("LpPool p = {p} is out of range");
        }
        super::pool_kernel(info, super::PoolKind::Lp(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernels::sliding_window::tests_support::wa;

    #[test]
    fn max_pool_indices_and_avg_pad() {
        let x: Vec<f64> = (0..16).map(|v| v as f64).collect();
        let w = wa(&[2, 2], &[2, 2], None, "NOTSET", false)
            .resolve(&[4, 4], None)
            .unwrap();
        let (y, ind) = pool_compute(PoolKind::Max, &x, &[1, 1, 4, 4], &w, 0);
        assert_eq!(y, vec![5.0, 7.0, 13.0, 15.0]);
        assert_eq!(ind, vec![5, 7, 13, 15]);
        let (_, ind) = pool_compute(PoolKind::Max, &x, &[1, 1, 4, 4], &w, 1);
        assert_eq!(ind, vec![5, 13, 7, 15]);
        let w = wa(&[3], &[1], Some(&[1, 1]), "NOTSET", false)
            .resolve(&[2], None)
            .unwrap();
        let (a, _) = pool_compute(
            PoolKind::Avg { include_pad: false },
            &[2.0, 4.0],
            &[1, 1, 2],
            &w,
            0,
        );
        assert_eq!(a, vec![3.0, 3.0]);
        let (b, _) = pool_compute(
            PoolKind::Avg { include_pad: true },
            &[2.0, 4.0],
            &[1, 1, 2],
            &w,
            0,
        );
        assert_eq!(b, vec![2.0, 2.0]);
    }
}
