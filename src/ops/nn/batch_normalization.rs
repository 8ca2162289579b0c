//! BatchNormalization: inference with the running statistics, and training
//! mode (batch statistics, updated running mean and variance).

use super::channel_stats::{channel_vec, nc_split};
use super::float_input::float_in;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;
use ndarray::{ArrayD, IxDyn};

fn channels(cx: &InferCtx) -> Dim {
    cx.shape(0).and_then(|s| {
        if s.len() == 1 {
            Some(Some(Expr::int(1)))
        } else {
            s.get(1).cloned()
        }
    })?
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    let c = channels(cx);
    for o in 1..cx.num_outputs() {
        let src = if o % 2 == 1 { 3 } else { 4 };
        let elem = cx.elem(src).or(cx.elem(0)).unwrap_or(DataType::Float);
        cx.set_tensor(o, elem, Some(vec![c.clone()]));
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let momentum = info.attrs.float_or("momentum", 0.9) as f64;
    let training = info.attrs.int_or("training_mode", 0) != 0;
    let nout = info.node.output.len();
    let opset = info.opset;
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "BatchNormalization")?;
        let (n, c, sp) = nc_split(x.shape())?;
        let scale = channel_vec(tensor_in(ins, 1)?, c, "scale")?;
        let bias = channel_vec(tensor_in(ins, 2)?, c, "B")?;
        let mean_t = tensor_in(ins, 3)?;
        let var_t = tensor_in(ins, 4)?;
        let in_mean = channel_vec(mean_t, c, "input_mean")?;
        let in_var = channel_vec(var_t, c, "input_var")?;
        // before opset 14 the extra outputs alone select the training form
        let training = training || (opset < 14 && nout > 1);
        let f32_fast = matches!(x, Tensor::F32(_)) && !training;
        let xv = if f32_fast { vec![] } else { to_f64s(x, "X")? };
        let (mean, var) = if training {
            let cnt = (n * sp).max(1) as f64;
            let mut m = vec![0.0; c];
            let mut vv = vec![0.0; c];
            for ni in 0..n {
                for (ci, mv) in m.iter_mut().enumerate() {
                    let base = (ni * c + ci) * sp;
                    *mv += xv[base..base + sp].iter().sum::<f64>();
                }
            }
            m.iter_mut().for_each(|v| *v /= cnt);
            for ni in 0..n {
                for (ci, (vc, mc)) in vv.iter_mut().zip(&m).enumerate() {
                    let base = (ni * c + ci) * sp;
                    *vc += xv[base..base + sp]
                        .iter()
                        .map(|v| (v - mc).powi(2))
                        .sum::<f64>();
                }
            }
            vv.iter_mut().for_each(|v| *v /= cnt);
            (m, vv)
        } else {
            (in_mean.clone(), in_var.clone())
        };
        // y = x * k + shift per channel
        let coef: Vec<(f64, f64)> = (0..c)
            .map(|ci| {
                let k = scale[ci] / (var[ci] + eps).sqrt();
                (k, bias[ci] - mean[ci] * k)
            })
            .collect();
        let y = match x {
            Tensor::F32(a) if f32_fast => {
                let a = a.as_standard_layout();
                let src = a
                    .as_slice()
                    .ok_or_else(|| KernelError::new("internal: non-contiguous buffer"))?;
                let mut out = Vec::with_capacity(src.len());
                for (i, ch) in src.chunks(sp.max(1)).enumerate() {
                    let (k, b) = (coef[i % c].0 as f32, coef[i % c].1 as f32);
                    out.extend(ch.iter().map(|&v| v * k + b));
                }
                Tensor::F32(ArrayD::from_shape_vec(IxDyn(x.shape()), out)?)
            }
            _ => {
                let mut y = xv;
                for (i, ch) in y.chunks_mut(sp.max(1)).enumerate() {
                    let (k, b) = coef[i % c];
                    ch.iter_mut().for_each(|v| *v = *v * k + b);
                }
                from_f64s(x.dtype(), x.shape(), y)?
            }
        };
        let mut outs: Vec<Value> = vec![y.into()];
        if training && nout > 1 {
            let rm: Vec<f64> = (0..c)
                .map(|i| in_mean[i] * momentum + mean[i] * (1.0 - momentum))
                .collect();
            let rv: Vec<f64> = (0..c)
                .map(|i| in_var[i] * momentum + var[i] * (1.0 - momentum))
                .collect();
            outs.push(from_f64s(mean_t.dtype(), &[c], rm)?.into());
            outs.push(from_f64s(var_t.dtype(), &[c], rv)?.into());
            if nout > 3 {
                outs.push(from_f64s(mean_t.dtype(), &[c], mean.clone())?.into());
                let inv: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
                outs.push(from_f64s(var_t.dtype(), &[c], inv)?.into());
            }
        }
        Ok(outs)
    }))
}
