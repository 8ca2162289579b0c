//! Neural-network kernels: Softmax / LogSoftmax / Hardmax, the
//! normalisations (BatchNormalization, InstanceNormalization,
//! LayerNormalization, GroupNormalization, LRN, LpNormalization,
//! MeanVarianceNormalization), Dropout (inference) and the pooling operators.
//!
//! These kernels compute in f64 through [`to_f64s`] / [`from_f64s`]; the
//! result is cast back to the input's element type.

use super::norm_axis;
use crate::bail;
use crate::runtime::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

/// The elements of a numeric tensor as f64, in row-major order.
pub fn to_f64s(t: &Tensor, what: &str) -> Result<Vec<f64>, KernelError> {
    if matches!(t, Tensor::Str(_) | Tensor::Bool(_) | Tensor::Small { .. }) {
        bail!("{what} must be numeric, got {}", t.dtype());
    }
    match t {
        Tensor::F32(a) if a.is_standard_layout() => {
            if let Some(s) = a.as_slice() {
                return Ok(s.iter().map(|&v| v as f64).collect());
            }
        }
        Tensor::F64(a) if a.is_standard_layout() => {
            if let Some(s) = a.as_slice() {
                return Ok(s.to_vec());
            }
        }
        _ => {}
    }
    t.to_f64_vec()
        .ok_or_else(|| KernelError::new(format!("{what} must be numeric, got {}", t.dtype())))
}

/// A tensor of element type `dtype` from f64 values (saturating casts for
/// integers).
pub fn from_f64s(dtype: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    let sh = IxDyn(shape);
    Ok(match dtype {
        DataType::Float => Tensor::F32(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as f32).collect(),
        )?),
        DataType::Double => Tensor::F64(ArrayD::from_shape_vec(sh, v)?),
        DataType::Float16 => Tensor::F16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(f16::from_f64).collect(),
        )?),
        DataType::Bfloat16 => Tensor::BF16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(bf16::from_f64).collect(),
        )?),
        DataType::Int8 => Tensor::I8(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i8).collect(),
        )?),
        DataType::Int16 => Tensor::I16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i16).collect(),
        )?),
        DataType::Int32 => Tensor::I32(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i32).collect(),
        )?),
        DataType::Int64 => Tensor::I64(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i64).collect(),
        )?),
        DataType::Uint8 => Tensor::U8(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u8).collect(),
        )?),
        DataType::Uint16 => Tensor::U16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u16).collect(),
        )?),
        DataType::Uint32 => Tensor::U32(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u32).collect(),
        )?),
        DataType::Uint64 => Tensor::U64(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u64).collect(),
        )?),
        other => bail!("cannot produce a {other} tensor here"),
    })
}

/// The element count of a shape, or an error when it is absurdly large.
pub fn checked_size(dims: &[usize]) -> Result<usize, KernelError> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= 1 << 32)
        .ok_or_else(|| KernelError::new(format!("the output shape {dims:?} is too large")))
}

fn is_float(d: DataType) -> bool {
    matches!(
        d,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    )
}

fn float_in<'v>(ins: &[Option<&'v Value>], i: usize, op: &str) -> Result<&'v Tensor, KernelError> {
    let t = tensor_in(ins, i)?;
    if !is_float(t.dtype()) {
        bail!("{op}: input {i} must be a float tensor, got {}", t.dtype());
    }
    Ok(t)
}

// ---------------------------------------------------------------- softmax

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SoftKind {
    Softmax,
    LogSoftmax,
    Hardmax,
}

/// Splits a shape into (outer, axis length, inner) for a softmax-like op:
/// before opset 13 the input is coerced to 2-D at `axis`; from 13 on the
/// operation runs along the single axis.
fn soft_split(
    shape: &[usize],
    axis: i64,
    opset: i64,
) -> Result<(usize, usize, usize), KernelError> {
    let r = shape.len();
    if opset < 13 {
        let a = if r == 0 {
            0
        } else if axis == r as i64 {
            r
        } else {
            norm_axis(axis, r)?
        };
        let outer: usize = shape[..a].iter().product();
        let len: usize = shape[a..].iter().product();
        Ok((outer, len, 1))
    } else {
        if r == 0 {
            return Ok((1, 1, 1));
        }
        let a = norm_axis(axis, r)?;
        Ok((
            shape[..a].iter().product(),
            shape[a],
            shape[a + 1..].iter().product(),
        ))
    }
}

fn soft_compute(kind: SoftKind, v: &mut [f64], outer: usize, len: usize, inner: usize) {
    let mut buf = vec![0.0; len];
    for o in 0..outer {
        for i in 0..inner {
            let base = o * len * inner + i;
            for (j, b) in buf.iter_mut().enumerate() {
                *b = v[base + j * inner];
            }
            match kind {
                SoftKind::Hardmax => {
                    let mut best = 0;
                    for j in 1..len {
                        if buf[j] > buf[best] {
                            best = j;
                        }
                    }
                    for (j, b) in buf.iter_mut().enumerate() {
                        *b = if j == best { 1.0 } else { 0.0 };
                    }
                }
                _ => {
                    let m = buf.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let s: f64 = buf.iter().map(|x| (x - m).exp()).sum();
                    for b in buf.iter_mut() {
                        *b = if kind == SoftKind::Softmax {
                            (*b - m).exp() / s
                        } else {
                            *b - m - s.ln()
                        };
                    }
                }
            }
            for (j, b) in buf.iter().enumerate() {
                v[base + j * inner] = *b;
            }
        }
    }
}

fn soft_kernel(info: &NodeInfo, kind: SoftKind) -> Result<Kernel, KernelError> {
    let opset = info.opset;
    let axis = info.attrs.int_or("axis", if opset < 13 { 1 } else { -1 });
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "softmax")?;
        let (outer, len, inner) = soft_split(x.shape(), axis, opset)?;
        let mut v = to_f64s(x, "input")?;
        soft_compute(kind, &mut v, outer, len, inner);
        Ok(vec![from_f64s(x.dtype(), x.shape(), v)?.into()])
    }))
}

pub fn softmax(info: &NodeInfo) -> Result<Kernel, KernelError> {
    soft_kernel(info, SoftKind::Softmax)
}

pub fn log_softmax(info: &NodeInfo) -> Result<Kernel, KernelError> {
    soft_kernel(info, SoftKind::LogSoftmax)
}

pub fn hardmax(info: &NodeInfo) -> Result<Kernel, KernelError> {
    soft_kernel(info, SoftKind::Hardmax)
}

// ------------------------------------------------------- normalisations

/// Per-channel parameter vector of length `c` (a single value is repeated).
fn channel_vec(t: &Tensor, c: usize, what: &str) -> Result<Vec<f64>, KernelError> {
    let v = to_f64s(t, what)?;
    if v.len() == c {
        Ok(v)
    } else if v.len() == 1 {
        Ok(vec![v[0]; c])
    } else {
        bail!("{what} has {} elements, expected {c}", v.len())
    }
}

/// (N, C, spatial size) of an N x C x ... tensor (a 1-D input is N x 1).
fn nc_split(shape: &[usize]) -> Result<(usize, usize, usize), KernelError> {
    match shape.len() {
        0 => bail!("the input must have rank >= 1"),
        1 => Ok((shape[0], 1, 1)),
        _ => Ok((shape[0], shape[1], shape[2..].iter().product())),
    }
}

pub fn batch_norm(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

/// Normalises each consecutive block of `block` elements to zero mean and
/// unit variance; returns the per-block (mean, 1/std).
fn standardize(v: &mut [f64], block: usize, eps: f64) -> (Vec<f64>, Vec<f64>) {
    let mut means = vec![];
    let mut invs = vec![];
    if block == 0 {
        return (means, invs);
    }
    for ch in v.chunks_mut(block) {
        let m = ch.iter().sum::<f64>() / block as f64;
        let var = ch.iter().map(|x| (x - m).powi(2)).sum::<f64>() / block as f64;
        let inv = 1.0 / (var + eps).sqrt();
        ch.iter_mut().for_each(|x| *x = (*x - m) * inv);
        means.push(m);
        invs.push(inv);
    }
    (means, invs)
}

pub fn instance_norm(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

/// `t` broadcast (numpy, unidirectional) to `shape`, as f64 in row-major order.
fn broadcast_to(t: &Tensor, shape: &[usize], what: &str) -> Result<Vec<f64>, KernelError> {
    let v = to_f64s(t, what)?;
    let a = ArrayD::from_shape_vec(IxDyn(t.shape()), v)?;
    let b = a.broadcast(IxDyn(shape)).ok_or_else(|| {
        KernelError::new(format!(
            "{what} of shape {:?} does not broadcast to {shape:?}",
            t.shape()
        ))
    })?;
    Ok(b.iter().cloned().collect())
}

pub fn layer_norm(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let axis = info.attrs.int_or("axis", -1);
    let stash = info.attrs.int_or("stash_type", 1);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "LayerNormalization")?;
        let sh = x.shape().to_vec();
        let a = norm_axis(axis, sh.len())?;
        let block: usize = sh[a..].iter().product();
        let mut v = to_f64s(x, "X")?;
        let (means, invs) = standardize(&mut v, block, eps);
        let scale = broadcast_to(tensor_in(ins, 1)?, &sh, "Scale")?;
        let bias = match opt_tensor_in(ins, 2)? {
            Some(b) => Some(broadcast_to(b, &sh, "B")?),
            None => None,
        };
        for (i, y) in v.iter_mut().enumerate() {
            *y = *y * scale[i] + bias.as_ref().map_or(0.0, |b| b[i]);
        }
        let mut stat_shape = sh[..a].to_vec();
        stat_shape.resize(sh.len(), 1);
        let st = match stash {
            1 => DataType::Float,
            11 => DataType::Double,
            10 => DataType::Float16,
            16 => DataType::Bfloat16,
            _ => x.dtype(),
        };
        Ok(vec![
            from_f64s(x.dtype(), &sh, v)?.into(),
            from_f64s(st, &stat_shape, means)?.into(),
            from_f64s(st, &stat_shape, invs)?.into(),
        ])
    }))
}

pub fn rms_norm(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let axis = info.attrs.int_or("axis", -1);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "RMSNormalization")?;
        let st = float_in(ins, 1, "RMSNormalization")?;
        let sh = x.shape().to_vec();
        let a = norm_axis(axis, sh.len())?;
        let block: usize = sh[a..].iter().product();
        let mut v = to_f64s(x, "X")?;
        let scale = broadcast_to(st, &sh, "scale")?;
        if block > 0 {
            for ch in v.chunks_mut(block) {
                let ms = ch.iter().map(|t| t * t).sum::<f64>() / block as f64;
                let rms = (ms + eps).sqrt();
                ch.iter_mut().for_each(|t| *t /= rms);
            }
        }
        for (y, s) in v.iter_mut().zip(&scale) {
            *y *= s;
        }
        Ok(vec![from_f64s(st.dtype(), &sh, v)?.into()])
    }))
}

pub fn group_norm(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

pub fn lrn(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1e-4) as f64;
    let beta = info.attrs.float_or("beta", 0.75) as f64;
    let bias = info.attrs.float_or("bias", 1.0) as f64;
    let size = info.attrs.int_or("size", 0);
    if size <= 0 {
        bail!("LRN needs a positive size, got {size}");
    }
    let size = size as usize;
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "LRN")?;
        if x.rank() < 2 {
            bail!("LRN needs rank >= 2, got {:?}", x.shape());
        }
        let (n, c, sp) = nc_split(x.shape())?;
        let v = to_f64s(x, "X")?;
        let mut y = vec![0.0; v.len()];
        let lo = (size - 1) / 2;
        let hi = size - 1 - lo;
        for ni in 0..n {
            for ci in 0..c {
                let c0 = ci.saturating_sub(lo);
                let c1 = (ci + hi).min(c - 1);
                for s in 0..sp {
                    let sq: f64 = (c0..=c1).map(|k| v[(ni * c + k) * sp + s].powi(2)).sum();
                    let i = (ni * c + ci) * sp + s;
                    y[i] = v[i] / (bias + alpha / size as f64 * sq).powf(beta);
                }
            }
        }
        Ok(vec![from_f64s(x.dtype(), x.shape(), y)?.into()])
    }))
}

pub fn lp_norm(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

pub fn mvn(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axes = info.attrs.ints("axes").unwrap_or_else(|| vec![0, 2, 3]);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "MeanVarianceNormalization")?;
        let sh = x.shape().to_vec();
        let mut red = vec![false; sh.len()];
        for &a in &axes {
            red[norm_axis(a, sh.len())?] = true;
        }
        let v = to_f64s(x, "X")?;
        let arr = ArrayD::from_shape_vec(IxDyn(&sh), v)?;
        // mean and mean of squares over the reduced axes, kept as size-1 axes
        let mut mean = arr.clone();
        let mut sq = arr.mapv(|t| t * t);
        for (ax, &r) in red.iter().enumerate() {
            if r {
                let len = sh[ax].max(1) as f64;
                mean = mean
                    .sum_axis(ndarray::Axis(ax))
                    .insert_axis(ndarray::Axis(ax))
                    / len;
                sq = sq
                    .sum_axis(ndarray::Axis(ax))
                    .insert_axis(ndarray::Axis(ax))
                    / len;
            }
        }
        let m = mean
            .broadcast(IxDyn(&sh))
            .ok_or_else(|| KernelError::new("broadcast failed"))?;
        let s = sq
            .broadcast(IxDyn(&sh))
            .ok_or_else(|| KernelError::new("broadcast failed"))?;
        let out: Vec<f64> = ndarray::Zip::from(&arr)
            .and(&m)
            .and(&s)
            .map_collect(|&xv, &mv, &sv| (xv - mv) / ((sv - mv * mv).max(0.0).sqrt() + 1e-9))
            .iter()
            .cloned()
            .collect();
        Ok(vec![from_f64s(x.dtype(), &sh, out)?.into()])
    }))
}

pub fn dropout(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let nout = info.node.output.len();
    let opset = info.opset;
    let attr_ratio = info.attrs.float_or("ratio", 0.5) as f64;
    let seed = info.attrs.int("seed");
    let calls = std::sync::atomic::AtomicU64::new(0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let training = if opset >= 12 {
            match opt_tensor_in(ins, 2)? {
                Some(t) => {
                    t.to_f64_vec()
                        .and_then(|v| v.first().copied())
                        .unwrap_or(0.0)
                        != 0.0
                }
                None => false,
            }
        } else {
            false
        };
        let ratio = if opset >= 12 {
            match opt_tensor_in(ins, 1)? {
                Some(t) => t
                    .to_f64_vec()
                    .and_then(|v| v.first().copied())
                    .unwrap_or(0.5),
                None => 0.5,
            }
        } else {
            attr_ratio
        };
        if training && ratio != 0.0 {
            if !(0.0..1.0).contains(&ratio) {
                bail!("Dropout ratio must be in [0, 1), got {ratio}");
            }
            if !is_float(x.dtype()) {
                bail!(
                    "Dropout in training mode needs a float input, got {}",
                    x.dtype()
                );
            }
            let call = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let base = match seed {
                Some(s) => s as u64,
                None => std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0),
            };
            let mut rng = SplitMix(base ^ call.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let keep: Vec<bool> = (0..x.len()).map(|_| rng.unit() >= ratio).collect();
            let scale = 1.0 / (1.0 - ratio);
            let y: Vec<f64> = to_f64s(x, "data")?
                .iter()
                .zip(&keep)
                .map(|(&v, &k)| if k { v * scale } else { 0.0 })
                .collect();
            let mut outs: Vec<Value> = vec![from_f64s(x.dtype(), x.shape(), y)?.into()];
            if nout > 1 {
                outs.push(Tensor::Bool(ArrayD::from_shape_vec(IxDyn(x.shape()), keep)?).into());
            }
            return Ok(outs);
        }
        let mut outs: Vec<Value> = vec![x.clone().into()];
        if nout > 1 {
            let mask = if opset >= 10 {
                Tensor::Bool(ArrayD::from_elem(IxDyn(x.shape()), true))
            } else {
                from_f64s(x.dtype(), x.shape(), vec![1.0; x.len()])?
            };
            outs.push(mask.into());
        }
        Ok(outs)
    }))
}

/// A small deterministic generator (SplitMix64) for Dropout's mask.
struct SplitMix(u64);

impl SplitMix {
    /// A uniform value in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

// ---------------------------------------------------------------- pooling

/// Resolved geometry of a pooling / convolution window over the spatial axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub kernel: Vec<usize>,
    pub strides: Vec<usize>,
    pub dilations: Vec<usize>,
    /// Begin pads per spatial axis.
    pub pad_begin: Vec<usize>,
    pub pad_end: Vec<usize>,
    pub out: Vec<usize>,
}

/// Window attributes as given on the node.
#[derive(Clone, Debug)]
pub struct WindowAttrs {
    pub kernel: Option<Vec<i64>>,
    pub strides: Option<Vec<i64>>,
    pub dilations: Option<Vec<i64>>,
    pub pads: Option<Vec<i64>>,
    pub auto_pad: String,
    pub ceil_mode: bool,
}

impl WindowAttrs {
    pub fn from_info(info: &NodeInfo) -> WindowAttrs {
        WindowAttrs {
            kernel: info.attrs.ints("kernel_shape"),
            strides: info.attrs.ints("strides"),
            dilations: info.attrs.ints("dilations"),
            pads: info.attrs.ints("pads"),
            auto_pad: info.attrs.string_or("auto_pad", "NOTSET"),
            ceil_mode: info.attrs.int_or("ceil_mode", 0) != 0,
        }
    }

    /// Resolves the window over `spatial` input sizes (`kernel` from the
    /// weights when the attribute is absent).
    pub fn resolve(
        &self,
        spatial: &[usize],
        kernel: Option<&[usize]>,
    ) -> Result<Window, KernelError> {
        let n = spatial.len();
        let pos = |v: &Option<Vec<i64>>, what: &str, min: i64| -> Result<Vec<usize>, KernelError> {
            match v {
                None => Ok(vec![1; n]),
                Some(v) if v.len() == n => v
                    .iter()
                    .map(|&x| {
                        if x < min || x > 1 << 24 {
                            bail!("{what} value {x} is out of range")
                        } else {
                            Ok(x as usize)
                        }
                    })
                    .collect(),
                Some(v) => bail!("{what} has {} values for {n} spatial axes", v.len()),
            }
        };
        let k = match (&self.kernel, kernel) {
            (Some(_), _) => pos(&self.kernel, "kernel_shape", 1)?,
            (None, Some(k)) => k.to_vec(),
            (None, None) => bail!("kernel_shape is required"),
        };
        if k.len() != n {
            bail!(
                "the kernel has {} axes, the input {n} spatial axes",
                k.len()
            );
        }
        let s = pos(&self.strides, "strides", 1)?;
        let d = pos(&self.dilations, "dilations", 1)?;
        let mut pb = vec![0usize; n];
        let mut pe = vec![0usize; n];
        let mut out = vec![0usize; n];
        for i in 0..n {
            let ext = (k[i] - 1) * d[i] + 1;
            match self.auto_pad.as_str() {
                "SAME_UPPER" | "SAME_LOWER" => {
                    let o = spatial[i].div_ceil(s[i]);
                    let total = ((o.max(1) - 1) * s[i] + ext).saturating_sub(spatial[i]);
                    let small = total / 2;
                    if self.auto_pad == "SAME_UPPER" {
                        pb[i] = small;
                        pe[i] = total - small;
                    } else {
                        pb[i] = total - small;
                        pe[i] = small;
                    }
                    out[i] = o;
                    continue;
                }
                "VALID" => {}
                "NOTSET" | "" => {
                    if let Some(p) = &self.pads {
                        if p.len() != 2 * n {
                            bail!("pads has {} values for {n} spatial axes", p.len());
                        }
                        if p[i] < 0 || p[i + n] < 0 || p[i] > 1 << 24 || p[i + n] > 1 << 24 {
                            bail!("pads {p:?} are out of range");
                        }
                        pb[i] = p[i] as usize;
                        pe[i] = p[i + n] as usize;
                    }
                }
                other => bail!("unknown auto_pad '{other}'"),
            }
            let full = spatial[i] + pb[i] + pe[i];
            if full < ext {
                bail!(
                    "the window ({ext}) is larger than the padded input ({full}) on spatial axis {i}"
                );
            }
            out[i] = if self.ceil_mode {
                let mut o = (full - ext).div_ceil(s[i]) + 1;
                // the last window must start inside the input or its begin pad
                if (o - 1) * s[i] >= spatial[i] + pb[i] {
                    o -= 1;
                }
                o
            } else {
                (full - ext) / s[i] + 1
            };
        }
        Ok(Window {
            kernel: k,
            strides: s,
            dilations: d,
            pad_begin: pb,
            pad_end: pe,
            out,
        })
    }
}

/// Advances a multi-index over `dims`; false when it wrapped around.
pub fn next_index(idx: &mut [usize], dims: &[usize]) -> bool {
    for i in (0..idx.len()).rev() {
        idx[i] += 1;
        if idx[i] < dims[i] {
            return true;
        }
        idx[i] = 0;
    }
    false
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
        if !(is_float(x.dtype()) || kind == PoolKind::Max && int8) {
            bail!("pooling does not accept {}", x.dtype());
        }
        let w = wa.resolve(&sh[2..], None)?;
        let mut oshape = sh[..2].to_vec();
        oshape.extend(&w.out);
        checked_size(&oshape)?;
        let v = to_f64s(x, "X")?;
        let (y, ind) = pool_compute(kind, &v, &sh, &w, storage_order);
        let mut outs: Vec<Value> = vec![from_f64s(x.dtype(), &oshape, y)?.into()];
        if nout > 1 && kind == PoolKind::Max {
            outs.push(Tensor::I64(ArrayD::from_shape_vec(IxDyn(&oshape), ind)?).into());
        }
        Ok(outs)
    }))
}

pub fn max_pool(info: &NodeInfo) -> Result<Kernel, KernelError> {
    pool_kernel(info, PoolKind::Max)
}

pub fn average_pool(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let include_pad = info.attrs.int_or("count_include_pad", 0) != 0;
    pool_kernel(info, PoolKind::Avg { include_pad })
}

pub fn lp_pool(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let p = info.attrs.int_or("p", 2);
    if !(1..=64).contains(&p) {
        bail!("LpPool p = {p} is out of range");
    }
    pool_kernel(info, PoolKind::Lp(p))
}

fn global_kernel(max: bool) -> Kernel {
    Box::new(move |_, ins| {
        let x = float_in(ins, 0, "global pooling")?;
        let sh = x.shape().to_vec();
        if sh.len() < 2 {
            bail!("global pooling needs rank >= 2, got {sh:?}");
        }
        let (n, c, sp) = nc_split(&sh)?;
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
        let mut oshape = sh[..2].to_vec();
        oshape.resize(sh.len(), 1);
        Ok(vec![from_f64s(x.dtype(), &oshape, y)?.into()])
    })
}

pub fn max_unpool(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let wa = WindowAttrs::from_info(info);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "MaxUnpool")?;
        let idx = tensor_in(ins, 1)?;
        if idx.dtype() != DataType::Int64 || idx.shape() != x.shape() {
            bail!(
                "MaxUnpool indices must be int64 of the shape of X {:?}, got {}",
                x.shape(),
                format!("{}{:?}", idx.dtype(), idx.shape())
            );
        }
        let sh = x.shape().to_vec();
        if sh.len() < 3 {
            bail!("MaxUnpool needs an N x C x D1 ... input, got {sh:?}");
        }
        let nd = sh.len() - 2;
        // the indices address the natural unpooled shape; an explicit
        // output_shape then places that result at its origin
        let k = wa
            .kernel
            .clone()
            .ok_or_else(|| KernelError::new("kernel_shape is required"))?;
        let s = wa.strides.clone().unwrap_or_else(|| vec![1; nd]);
        let p = wa.pads.clone().unwrap_or_else(|| vec![0; 2 * nd]);
        if k.len() != nd || s.len() != nd || p.len() != 2 * nd {
            bail!("kernel_shape, strides and pads must match {nd} spatial axes");
        }
        let mut natural = sh[..2].to_vec();
        for i in 0..nd {
            let d = (sh[i + 2] as i64 - 1)
                .saturating_mul(s[i])
                .saturating_add(k[i])
                .saturating_sub(p[i])
                .saturating_sub(p[i + nd]);
            if !(0..=1 << 32).contains(&d) {
                bail!("the output size on spatial axis {i} is invalid ({d})");
            }
            natural.push(d as usize);
        }
        let total = checked_size(&natural)?;
        let mut y = vec![0.0f64; total];
        let xv = to_f64s(x, "X")?;
        for (v, &i) in xv.iter().zip(&idx.to_i64_vec()?) {
            if i < 0 || i as usize >= total {
                bail!("MaxUnpool index {i} is outside the output of {total} elements");
            }
            y[i as usize] = *v;
        }
        let oshape: Vec<usize> = match opt_tensor_in(ins, 2)? {
            Some(t) => {
                let v = t.to_i64_vec()?;
                if v.len() != sh.len() || v.iter().any(|&d| d < 0) {
                    bail!(
                        "output_shape {v:?} must have {} non-negative values",
                        sh.len()
                    );
                }
                v.iter().map(|&d| d as usize).collect()
            }
            None => natural.clone(),
        };
        if oshape != natural {
            checked_size(&oshape)?;
            let src = ArrayD::from_shape_vec(IxDyn(&natural), y)?;
            let mut dst = ArrayD::<f64>::zeros(IxDyn(&oshape));
            let common: Vec<usize> = natural
                .iter()
                .zip(&oshape)
                .map(|(a, b)| *a.min(b))
                .collect();
            let sl: Vec<ndarray::SliceInfoElem> = common
                .iter()
                .map(|&c| ndarray::SliceInfoElem::from(0..c))
                .collect();
            dst.slice_mut(sl.as_slice())
                .assign(&src.slice(sl.as_slice()));
            y = dst.iter().cloned().collect();
        }
        Ok(vec![from_f64s(x.dtype(), &oshape, y)?.into()])
    }))
}

pub fn global_average_pool(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(global_kernel(false))
}

pub fn global_max_pool(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(global_kernel(true))
}

// -------------------------------------------------------------- Attention

/// Q/K/V as (batch, heads, seq, head size) f64 buffers.
struct Heads {
    b: usize,
    h: usize,
    s: usize,
    d: usize,
    v: Vec<f64>,
}

fn to_heads(t: &Tensor, heads: Option<i64>, what: &str) -> Result<Heads, KernelError> {
    let sh = t.shape();
    let v = to_f64s(t, what)?;
    match sh.len() {
        4 => Ok(Heads {
            b: sh[0],
            h: sh[1],
            s: sh[2],
            d: sh[3],
            v,
        }),
        3 => {
            let Some(h) = heads.filter(|&h| h > 0) else {
                bail!("{what} is 3-D: the number of heads attribute is required");
            };
            let h = h as usize;
            let (b, s, hid) = (sh[0], sh[1], sh[2]);
            if hid % h != 0 {
                bail!("{what} hidden size {hid} is not divisible by {h} heads");
            }
            let d = hid / h;
            let mut out = vec![0.0; v.len()];
            for bi in 0..b {
                for si in 0..s {
                    for hi in 0..h {
                        let src = (bi * s + si) * hid + hi * d;
                        let dst = ((bi * h + hi) * s + si) * d;
                        out[dst..dst + d].copy_from_slice(&v[src..src + d]);
                    }
                }
            }
            Ok(Heads { b, h, s, d, v: out })
        }
        _ => bail!("{what} must be 3-D or 4-D, got {sh:?}"),
    }
}

/// Concatenates a past cache and new keys/values along the sequence axis.
fn concat_seq(past: &Heads, new: &Heads, what: &str) -> Result<Heads, KernelError> {
    if past.b != new.b || past.h != new.h || past.d != new.d {
        bail!("{what} does not match the new keys/values");
    }
    let s = past.s + new.s;
    let mut v = Vec::with_capacity(new.b * new.h * s * new.d);
    for bh in 0..new.b * new.h {
        v.extend_from_slice(&past.v[bh * past.s * past.d..(bh + 1) * past.s * past.d]);
        v.extend_from_slice(&new.v[bh * new.s * new.d..(bh + 1) * new.s * new.d]);
    }
    Ok(Heads {
        b: new.b,
        h: new.h,
        s,
        d: new.d,
        v,
    })
}

fn heads_tensor(dtype: DataType, x: &Heads) -> Result<Tensor, KernelError> {
    from_f64s(dtype, &[x.b, x.h, x.s, x.d], x.v.clone())
}

pub fn attention(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let causal = info.attrs.int_or("is_causal", 0) != 0;
    let qh = info.attrs.int("q_num_heads");
    let kvh = info.attrs.int("kv_num_heads");
    let mode = info.attrs.int_or("qk_matmul_output_mode", 0);
    let scale_attr = info.attrs.float("scale").map(|v| v as f64);
    let softcap = info.attrs.float_or("softcap", 0.0) as f64;
    let left = info.attrs.int_or("left_window_size", -1);
    let right = info.attrs.int_or("right_window_size", -1);
    let nout = info.node.output.len();
    Ok(Box::new(move |_, ins| {
        let qt = float_in(ins, 0, "Attention")?;
        let kt = float_in(ins, 1, "Attention")?;
        let vt = float_in(ins, 2, "Attention")?;
        let three_d = qt.rank() == 3;
        let q = to_heads(qt, qh, "Q")?;
        let mut k = to_heads(kt, kvh, "K")?;
        let mut v = to_heads(vt, kvh, "V")?;
        let past_k = opt_tensor_in(ins, 4)?;
        let past_v = opt_tensor_in(ins, 5)?;
        let mut past_len = 0usize;
        if let (Some(pk), Some(pv)) = (past_k, past_v) {
            let pk = to_heads(pk, kvh, "past_key")?;
            let pv = to_heads(pv, kvh, "past_value")?;
            past_len = pk.s;
            k = concat_seq(&pk, &k, "past_key")?;
            v = concat_seq(&pv, &v, "past_value")?;
        }
        if k.b != q.b || v.b != q.b || k.d != q.d || v.s != k.s || v.h != k.h {
            bail!("Q, K and V shapes do not match");
        }
        if k.h == 0 || q.h % k.h != 0 {
            bail!(
                "{} query heads are not a multiple of {} key/value heads",
                q.h,
                k.h
            );
        }
        let (b, hq, sq, d) = (q.b, q.h, q.s, q.d);
        let (skv, dv) = (k.s, v.d);
        let group = hq / k.h;
        let scale = scale_attr.unwrap_or(1.0 / (d.max(1) as f64).sqrt());
        let nonpad: Option<Vec<i64>> = match opt_tensor_in(ins, 6)? {
            Some(t) => {
                let v = t.to_i64_vec()?;
                if v.len() != b {
                    bail!("nonpad_kv_seqlen has {} values for batch {b}", v.len());
                }
                Some(v)
            }
            None => None,
        };
        // the additive mask, broadcast to (b, hq, sq, skv)
        let mask: Option<Vec<f64>> = match opt_tensor_in(ins, 3)? {
            None => None,
            Some(m) => {
                let is_bool = m.dtype() == DataType::Bool;
                let mv = m
                    .to_f64_vec()
                    .ok_or_else(|| KernelError::new("attn_mask must be numeric or bool"))?;
                let mv: Vec<f64> = if is_bool {
                    mv.iter()
                        .map(|&x| if x != 0.0 { 0.0 } else { f64::NEG_INFINITY })
                        .collect()
                } else {
                    mv
                };
                let mut msh = m.shape().to_vec();
                if msh.len() > 4 || msh.is_empty() {
                    bail!("attn_mask must have rank 1 to 4, got {msh:?}");
                }
                // pad the last axis to the total length with -inf
                let last = *msh.last().unwrap_or(&1);
                let arr = if last < skv && last != 1 {
                    let rows = mv.len() / last.max(1);
                    let mut p = Vec::with_capacity(rows * skv);
                    for r in 0..rows {
                        p.extend_from_slice(&mv[r * last..(r + 1) * last]);
                        p.extend(std::iter::repeat_n(f64::NEG_INFINITY, skv - last));
                    }
                    if let Some(l) = msh.last_mut() {
                        *l = skv;
                    }
                    p
                } else {
                    mv
                };
                let a = ArrayD::from_shape_vec(IxDyn(&msh), arr)?;
                let full = a.broadcast(IxDyn(&[b, hq, sq, skv])).ok_or_else(|| {
                    KernelError::new(format!(
                        "attn_mask of shape {:?} does not broadcast to [{b}, {hq}, {sq}, {skv}]",
                        m.shape()
                    ))
                })?;
                Some(full.iter().cloned().collect())
            }
        };
        let mut y = vec![0.0; b * hq * sq * dv];
        let mut qk_out = vec![0.0; if nout > 3 { b * hq * sq * skv } else { 0 }];
        let mut row = vec![0.0; skv];
        for bi in 0..b {
            let valid = nonpad
                .as_ref()
                .map(|n| n[bi].clamp(0, skv as i64) as usize)
                .unwrap_or(skv);
            let offset: i64 = if past_k.is_some() {
                past_len as i64
            } else if let Some(n) = &nonpad {
                n[bi] - sq as i64
            } else {
                0
            };
            for hi in 0..hq {
                let kh = hi / group;
                for i in 0..sq {
                    let qrow = &q.v[((bi * hq + hi) * sq + i) * d..][..d];
                    for (j, r) in row.iter_mut().enumerate() {
                        let krow = &k.v[((bi * k.h + kh) * skv + j) * d..][..d];
                        *r = qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>() * scale;
                    }
                    let qk_base = ((bi * hq + hi) * sq + i) * skv;
                    if mode == 0 && nout > 3 {
                        qk_out[qk_base..qk_base + skv].copy_from_slice(&row);
                    }
                    if softcap > 0.0 {
                        row.iter_mut()
                            .for_each(|r| *r = softcap * (*r / softcap).tanh());
                    }
                    if mode == 1 && nout > 3 {
                        qk_out[qk_base..qk_base + skv].copy_from_slice(&row);
                    }
                    let pos = offset + i as i64;
                    for (j, r) in row.iter_mut().enumerate() {
                        let ji = j as i64;
                        let mut allowed = j < valid;
                        if causal && ji > pos {
                            allowed = false;
                        }
                        if left >= 0 && ji < pos - left {
                            allowed = false;
                        }
                        if right >= 0 && ji > pos + right {
                            allowed = false;
                        }
                        if !allowed {
                            *r = f64::NEG_INFINITY;
                        } else if let Some(m) = &mask {
                            *r += m[qk_base + j];
                        }
                    }
                    if mode == 2 && nout > 3 {
                        qk_out[qk_base..qk_base + skv].copy_from_slice(&row);
                    }
                    let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    if mx == f64::NEG_INFINITY {
                        row.iter_mut().for_each(|r| *r = 0.0);
                    } else {
                        let mut sum = 0.0;
                        for r in row.iter_mut() {
                            *r = (*r - mx).exp();
                            sum += *r;
                        }
                        row.iter_mut().for_each(|r| *r /= sum);
                    }
                    if mode == 3 && nout > 3 {
                        qk_out[qk_base..qk_base + skv].copy_from_slice(&row);
                    }
                    let yrow = &mut y[((bi * hq + hi) * sq + i) * dv..][..dv];
                    for (j, &p) in row.iter().enumerate() {
                        if p != 0.0 {
                            let vrow = &v.v[((bi * v.h + kh) * skv + j) * dv..][..dv];
                            for (o, &x) in yrow.iter_mut().zip(vrow) {
                                *o += p * x;
                            }
                        }
                    }
                }
            }
        }
        let yt = if three_d {
            let mut out = vec![0.0; y.len()];
            for bi in 0..b {
                for hi in 0..hq {
                    for i in 0..sq {
                        let src = ((bi * hq + hi) * sq + i) * dv;
                        let dst = (bi * sq + i) * hq * dv + hi * dv;
                        out[dst..dst + dv].copy_from_slice(&y[src..src + dv]);
                    }
                }
            }
            from_f64s(qt.dtype(), &[b, sq, hq * dv], out)?
        } else {
            from_f64s(qt.dtype(), &[b, hq, sq, dv], y)?
        };
        let mut outs: Vec<Value> = vec![yt.into()];
        if nout > 1 {
            outs.push(heads_tensor(kt.dtype(), &k)?.into());
        }
        if nout > 2 {
            outs.push(heads_tensor(vt.dtype(), &v)?.into());
        }
        if nout > 3 {
            outs.push(from_f64s(qt.dtype(), &[b, hq, sq, skv], qk_out)?.into());
        }
        Ok(outs)
    }))
}

// ------------------------------------------------------ RotaryEmbedding

pub fn rotary_embedding(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let interleaved = info.attrs.int_or("interleaved", 0) != 0;
    let heads_attr = info.attrs.int_or("num_heads", 0);
    let rot_attr = info.attrs.int_or("rotary_embedding_dim", 0);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "RotaryEmbedding")?;
        let cos_t = float_in(ins, 1, "RotaryEmbedding")?;
        let sin_t = float_in(ins, 2, "RotaryEmbedding")?;
        let sh = x.shape().to_vec();
        // (batch, seq, heads, head size) and the flat offset of a head row
        let (b, s, h, d, four) = match sh.len() {
            4 => (sh[0], sh[2], sh[1], sh[3], true),
            3 => {
                if heads_attr <= 0 {
                    bail!("a 3-D input needs the num_heads attribute");
                }
                let h = heads_attr as usize;
                if sh[2] % h != 0 {
                    bail!("hidden size {} is not divisible by {h} heads", sh[2]);
                }
                (sh[0], sh[1], h, sh[2] / h, false)
            }
            _ => bail!("RotaryEmbedding needs a 3-D or 4-D input, got {sh:?}"),
        };
        let rd = if rot_attr <= 0 { d } else { rot_attr as usize };
        if rd > d || rd % 2 != 0 {
            bail!("rotary_embedding_dim {rd} must be even and at most the head size {d}");
        }
        let half = rd / 2;
        let cosv = to_f64s(cos_t, "cos_cache")?;
        let sinv = to_f64s(sin_t, "sin_cache")?;
        if cos_t.shape() != sin_t.shape() || cos_t.shape().last() != Some(&half) {
            bail!(
                "cos_cache {:?} and sin_cache {:?} must end in rotary_embedding_dim / 2 = {half}",
                cos_t.shape(),
                sin_t.shape()
            );
        }
        // the cache row of (batch, position)
        let rows: Vec<usize> = match opt_tensor_in(ins, 3)? {
            Some(p) => {
                let ids = p.to_i64_vec()?;
                if p.shape() != [b, s] {
                    bail!(
                        "position_ids must have shape [{b}, {s}], got {:?}",
                        p.shape()
                    );
                }
                let max = cos_t.shape()[0] as i64;
                if cos_t.rank() != 2 {
                    bail!("with position_ids the caches must be 2-D");
                }
                ids.iter()
                    .map(|&i| {
                        if i < 0 || i >= max {
                            bail!("position id {i} is outside the cache of {max} rows")
                        } else {
                            Ok(i as usize)
                        }
                    })
                    .collect::<Result<_, _>>()?
            }
            None => {
                if cos_t.shape() != [b, s, half] {
                    bail!("without position_ids the caches must have shape [{b}, {s}, {half}]");
                }
                (0..b * s).collect()
            }
        };
        let mut v = to_f64s(x, "X")?;
        for bi in 0..b {
            for si in 0..s {
                let row = rows[bi * s + si];
                let c = &cosv[row * half..(row + 1) * half];
                let sn = &sinv[row * half..(row + 1) * half];
                for hi in 0..h {
                    let base = if four {
                        ((bi * h + hi) * s + si) * d
                    } else {
                        (bi * s + si) * h * d + hi * d
                    };
                    for i in 0..half {
                        let (p, q) = if interleaved {
                            (base + 2 * i, base + 2 * i + 1)
                        } else {
                            (base + i, base + i + half)
                        };
                        let (x1, x2) = (v[p], v[q]);
                        v[p] = c[i] * x1 - sn[i] * x2;
                        v[q] = sn[i] * x1 + c[i] * x2;
                    }
                }
            }
        }
        Ok(vec![from_f64s(x.dtype(), &sh, v)?.into()])
    }))
}

// ------------------------------------------------------ LinearAttention

pub fn linear_attention(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let qh = info.attrs.int_or("q_num_heads", 0);
    let kvh = info.attrs.int_or("kv_num_heads", 0);
    if qh <= 0 || kvh <= 0 || qh % kvh != 0 {
        bail!("q_num_heads ({qh}) must be a positive multiple of kv_num_heads ({kvh})");
    }
    let (qh, kvh) = (qh as usize, kvh as usize);
    let scale_attr = info.attrs.float_or("scale", 0.0) as f64;
    let rule = info.attrs.string_or("update_rule", "gated_delta");
    let (gated, delta) = match rule.as_str() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        other => bail!("unknown update_rule '{other}'"),
    };
    Ok(Box::new(move |_, ins| {
        let qt = float_in(ins, 0, "LinearAttention")?;
        let kt = float_in(ins, 1, "LinearAttention")?;
        let vt = float_in(ins, 2, "LinearAttention")?;
        let (qs, ks, vs) = (qt.shape(), kt.shape(), vt.shape());
        if qs.len() != 3 || ks.len() != 3 || vs.len() != 3 {
            bail!("query, key and value must be 3-D");
        }
        let (b, t) = (qs[0], qs[1]);
        if ks[..2] != qs[..2] || vs[..2] != qs[..2] {
            bail!("query {qs:?}, key {ks:?} and value {vs:?} differ in batch or length");
        }
        if qs[2] % qh != 0 || vs[2] % kvh != 0 || ks[2] != kvh * (qs[2] / qh) {
            bail!("the hidden sizes do not split into the given heads");
        }
        let (dk, dv) = (qs[2] / qh, vs[2] / kvh);
        let scale = if scale_attr == 0.0 {
            1.0 / (dk.max(1) as f64).sqrt()
        } else {
            scale_attr
        };
        let q = to_f64s(qt, "query")?;
        let k = to_f64s(kt, "key")?;
        let v = to_f64s(vt, "value")?;
        let state_len = b * kvh * dk * dv;
        let (mut st, st_type) = match opt_tensor_in(ins, 3)? {
            Some(p) => {
                if p.shape() != [b, kvh, dk, dv] {
                    bail!(
                        "past_state must have shape [{b}, {kvh}, {dk}, {dv}], got {:?}",
                        p.shape()
                    );
                }
                (to_f64s(p, "past_state")?, p.dtype())
            }
            None => (vec![0.0; state_len], qt.dtype()),
        };
        // decay per (b, t, kv head, key dim); beta per (b, t, kv head)
        let decay: Option<(Vec<f64>, bool)> = match opt_tensor_in(ins, 4)? {
            Some(g) => {
                let gs = g.shape();
                let per_dim = gs == [b, t, kvh * dk];
                if !per_dim && gs != [b, t, kvh] {
                    bail!(
                        "decay must have shape [{b}, {t}, {}] or [{b}, {t}, {kvh}], got {gs:?}",
                        kvh * dk
                    );
                }
                Some((to_f64s(g, "decay")?, per_dim))
            }
            None if gated => bail!("update_rule '{rule}' needs the decay input"),
            None => None,
        };
        let beta: Option<(Vec<f64>, bool)> = match opt_tensor_in(ins, 5)? {
            Some(be) => {
                let bs = be.shape();
                let per_head = bs == [b, t, kvh];
                if !per_head && bs != [b, t, 1] {
                    bail!("beta must have shape [{b}, {t}, {kvh}] or [{b}, {t}, 1], got {bs:?}");
                }
                Some((to_f64s(be, "beta")?, per_head))
            }
            None if delta => bail!("update_rule '{rule}' needs the beta input"),
            None => None,
        };
        let group = qh / kvh;
        let mut out = vec![0.0; b * t * qh * dv];
        let mut sk = vec![0.0; dv];
        for bi in 0..b {
            for ti in 0..t {
                for h in 0..kvh {
                    let s = &mut st[(bi * kvh + h) * dk * dv..][..dk * dv];
                    let kv = &k[(bi * t + ti) * kvh * dk + h * dk..][..dk];
                    let vv = &v[(bi * t + ti) * kvh * dv + h * dv..][..dv];
                    if let Some((g, per_dim)) = &decay {
                        if gated {
                            for i in 0..dk {
                                let gi = if *per_dim {
                                    g[(bi * t + ti) * kvh * dk + h * dk + i]
                                } else {
                                    g[(bi * t + ti) * kvh + h]
                                };
                                let e = gi.exp();
                                s[i * dv..(i + 1) * dv].iter_mut().for_each(|x| *x *= e);
                            }
                        }
                    }
                    if delta {
                        let be = match &beta {
                            Some((bv, true)) => bv[(bi * t + ti) * kvh + h],
                            Some((bv, false)) => bv[bi * t + ti],
                            None => 1.0,
                        };
                        // sk = S^T k (with the decayed state)
                        for (j, o) in sk.iter_mut().enumerate() {
                            *o = (0..dk).map(|i| s[i * dv + j] * kv[i]).sum();
                        }
                        for i in 0..dk {
                            for j in 0..dv {
                                s[i * dv + j] += be * kv[i] * (vv[j] - sk[j]);
                            }
                        }
                    } else {
                        for i in 0..dk {
                            for j in 0..dv {
                                s[i * dv + j] += kv[i] * vv[j];
                            }
                        }
                    }
                    for qi in h * group..(h + 1) * group {
                        let qv = &q[(bi * t + ti) * qh * dk + qi * dk..][..dk];
                        let o = &mut out[(bi * t + ti) * qh * dv + qi * dv..][..dv];
                        for (j, oj) in o.iter_mut().enumerate() {
                            *oj = scale * (0..dk).map(|i| qv[i] * s[i * dv + j]).sum::<f64>();
                        }
                    }
                }
            }
        }
        Ok(vec![
            from_f64s(qt.dtype(), &[b, t, qh * dv], out)?.into(),
            from_f64s(st_type, &[b, kvh, dk, dv], st)?.into(),
        ])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wa(k: &[i64], s: &[i64], pads: Option<&[i64]>, auto: &str, ceil: bool) -> WindowAttrs {
        WindowAttrs {
            kernel: Some(k.to_vec()),
            strides: Some(s.to_vec()),
            dilations: None,
            pads: pads.map(|p| p.to_vec()),
            auto_pad: auto.into(),
            ceil_mode: ceil,
        }
    }

    #[test]
    fn window_sizes() {
        let w = wa(&[3], &[2], Some(&[1, 1]), "NOTSET", false)
            .resolve(&[6], None)
            .unwrap();
        assert_eq!(w.out, vec![3]);
        let w = wa(&[3], &[2], None, "NOTSET", true)
            .resolve(&[6], None)
            .unwrap();
        assert_eq!(w.out, vec![3]); // (6-3)/2 ceil = 2, + 1
        let w = wa(&[3], &[2], None, "SAME_LOWER", false)
            .resolve(&[5], None)
            .unwrap();
        assert_eq!((w.out[0], w.pad_begin[0], w.pad_end[0]), (3, 1, 1));
        let w = wa(&[2], &[1], None, "SAME_LOWER", false)
            .resolve(&[4], None)
            .unwrap();
        assert_eq!((w.pad_begin[0], w.pad_end[0]), (1, 0));
        assert!(wa(&[9], &[1], None, "NOTSET", false)
            .resolve(&[4], None)
            .is_err());
    }

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

    #[test]
    fn softmax_rows_sum_to_one_and_hardmax_first_max() {
        let mut v = vec![1.0, 2.0, 3.0, 3.0, 3.0, 0.0];
        soft_compute(SoftKind::Softmax, &mut v, 2, 3, 1);
        assert!((v[..3].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut h = vec![1.0, 3.0, 3.0, 0.0];
        soft_compute(SoftKind::Hardmax, &mut h, 1, 4, 1);
        assert_eq!(h, vec![0.0, 1.0, 0.0, 0.0]);
        assert_eq!(soft_split(&[2, 3, 4], 1, 11).unwrap(), (2, 12, 1));
        assert_eq!(soft_split(&[2, 3, 4], 1, 13).unwrap(), (2, 3, 4));
    }

    use crate::ops::Attrs;
    use crate::proto::attribute_proto::AttributeType;
    use crate::proto::{AttributeProto, NodeProto};
    use crate::runtime::kernel::RunCtx;

    /// Builds and runs a kernel on tensors.
    fn run(
        build: fn(&NodeInfo) -> Result<Kernel, KernelError>,
        attrs: Vec<AttributeProto>,
        nout: usize,
        ins: Vec<Tensor>,
    ) -> Result<Vec<Value>, KernelError> {
        let node = NodeProto {
            output: (0..nout).map(|i| format!("o{i}")).collect(),
            attribute: attrs,
            ..Default::default()
        };
        let compile = |_: &crate::proto::GraphProto| Err(KernelError::new("no subgraphs"));
        let info = NodeInfo {
            node: &node,
            opset: 23,
            attrs: Attrs::new(&node),
            compile: &compile,
        };
        let k = build(&info)?;
        let mut runner = |_: &crate::runtime::Plan,
                          _: Vec<(String, Value)>|
         -> Result<Vec<Value>, KernelError> {
            Err(KernelError::new("no subgraphs"))
        };
        let mut cx = RunCtx {
            runner: &mut runner,
        };
        let vals: Vec<Value> = ins.into_iter().map(Value::Tensor).collect();
        let refs: Vec<Option<&Value>> = vals.iter().map(Some).collect();
        k(&mut cx, &refs)
    }

    fn int_attr(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(AttributeType::Int as i32),
            i: Some(v),
            ..Default::default()
        }
    }

    fn f64s(v: &Value) -> Vec<f64> {
        v.as_tensor()
            .and_then(|t| t.to_f64_vec())
            .unwrap_or_default()
    }

    #[test]
    fn causal_attention_first_query_sees_only_first_key() {
        // one head, 2 queries, 2 keys, head size 1; values 10 and 20
        let q = Tensor::from_vec(&[1, 1, 2, 1], vec![1.0f32, 1.0]).unwrap();
        let k = Tensor::from_vec(&[1, 1, 2, 1], vec![0.0f32, 0.0]).unwrap();
        let v = Tensor::from_vec(&[1, 1, 2, 1], vec![10.0f32, 20.0]).unwrap();
        let out = run(
            attention,
            vec![int_attr("is_causal", 1)],
            1,
            vec![q.clone(), k.clone(), v.clone()],
        )
        .unwrap();
        // equal scores: row 0 averages {10}, row 1 averages {10, 20}
        assert_eq!(f64s(&out[0]), vec![10.0, 15.0]);
        let out = run(attention, vec![], 1, vec![q, k, v]).unwrap();
        assert_eq!(f64s(&out[0]), vec![15.0, 15.0]);
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let x = Tensor::from_vec(&[2, 3], vec![0.0f32; 6]).unwrap();
        assert!(run(max_pool, vec![], 1, vec![x.clone()]).is_err());
        assert!(run(batch_norm, vec![], 1, vec![x.clone()]).is_err());
        assert!(run(attention, vec![], 1, vec![x.clone(), x.clone(), x]).is_err());
    }

    #[test]
    fn splitmix_is_uniform_enough() {
        let mut r = SplitMix(7);
        let v: Vec<f64> = (0..10000).map(|_| r.unit()).collect();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
        let below = v.iter().filter(|&&x| x < 0.25).count();
        assert!((2200..2800).contains(&below), "{below}");
    }
}
