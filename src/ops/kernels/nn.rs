//! Neural-network kernels: Softmax / LogSoftmax / Hardmax, the
//! normalisations (BatchNormalization, InstanceNormalization,
//! LayerNormalization, GroupNormalization, LRN, LpNormalization,
//! MeanVarianceNormalization), Dropout (inference) and the pooling operators.
//!
//! These kernels compute in f64 through [`to_f64s`] / [`from_f64s`]; the
//! result is cast back to the input's element type.

use super::norm_axis;
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
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

/// The element count of a shape the kernel is about to allocate, checked
/// against the memory budget (8 bytes per element: kernels may compute in
/// f64).
pub fn checked_size(dims: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(dims, 8)?)
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
        if let (Tensor::F32(a), 1, SoftKind::Softmax | SoftKind::LogSoftmax) = (x, inner, kind) {
            if let Some(src) = a.as_slice() {
                let log = kind == SoftKind::LogSoftmax;
                let y = super::rows_f32::softmax_rows(src, len, log);
                return Ok(vec![
                    Tensor::F32(ArrayD::from_shape_vec(a.raw_dim(), y)?).into()
                ]);
            }
        }
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
pub(crate) fn broadcast_to(
    t: &Tensor,
    shape: &[usize],
    what: &str,
) -> Result<Vec<f64>, KernelError> {
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
        let mut stat_shape = sh[..a].to_vec();
        stat_shape.resize(sh.len(), 1);
        let st = match stash {
            1 => DataType::Float,
            11 => DataType::Double,
            10 => DataType::Float16,
            16 => DataType::Bfloat16,
            _ => x.dtype(),
        };
        if let Some((y, means, invs)) = layer_norm_f32(x, ins, a, eps)? {
            return Ok(vec![
                Tensor::F32(ArrayD::from_shape_vec(IxDyn(&sh), y)?).into(),
                from_f64s(st, &stat_shape, means)?.into(),
                from_f64s(st, &stat_shape, invs)?.into(),
            ]);
        }
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
        Ok(vec![
            from_f64s(x.dtype(), &sh, v)?.into(),
            from_f64s(st, &stat_shape, means)?.into(),
            from_f64s(st, &stat_shape, invs)?.into(),
        ])
    }))
}

/// LayerNormalization on the f32 fast path when it applies: a contiguous
/// float32 input, and a float32 Scale (and B) holding exactly one value per
/// element of the normalised block. `None` sends the caller to the f64 path.
type LayerNormRows = (Vec<f32>, Vec<f64>, Vec<f64>);
fn layer_norm_f32(
    x: &Tensor,
    ins: &[Option<&Value>],
    axis: usize,
    eps: f64,
) -> Result<Option<LayerNormRows>, KernelError> {
    let Tensor::F32(a) = x else { return Ok(None) };
    let Some(src) = a.as_slice() else {
        return Ok(None);
    };
    let block: usize = a.shape()[axis..].iter().product();
    // Scale and B must have the block's own shape (leading 1s aside): the
    // f64 path broadcasts anything else, or refuses it
    let trim = |d: &[usize]| {
        d.iter()
            .skip_while(|&&n| n == 1)
            .copied()
            .collect::<Vec<_>>()
    };
    let block_dims = trim(&a.shape()[axis..]);
    let per_block = |t: &Tensor| match t {
        Tensor::F32(s) if trim(s.shape()) == block_dims => s.as_slice().map(|v| v.to_vec()),
        _ => None,
    };
    let Some(scale) = per_block(tensor_in(ins, 1)?) else {
        return Ok(None);
    };
    let bias = match opt_tensor_in(ins, 2)? {
        Some(b) => match per_block(b) {
            Some(v) => Some(v),
            None => return Ok(None),
        },
        None => None,
    };
    if block == 0 {
        return Ok(None);
    }
    Ok(Some(super::rows_f32::layer_norm_rows(
        src,
        block,
        eps,
        &scale,
        bias.as_deref(),
    )))
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
        if let (Tensor::F32(a), 4, 1) = (x, sh.len(), nout) {
            let fast = match kind {
                PoolKind::Max => Some(super::pool_fast::Pool2dKind::Max),
                PoolKind::Avg { include_pad } => {
                    Some(super::pool_fast::Pool2dKind::Avg { include_pad })
                }
                PoolKind::Lp(_) => None,
            };
            if let Some(k) = fast.filter(|_| w.dilations.iter().all(|&d| d == 1)) {
                let g = super::pool_fast::Pool2d {
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
                let y = super::pool_fast::pool2d_f32(data, sh[0] * sh[1], &g, k);
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
        let mut oshape = sh[..2].to_vec();
        oshape.resize(sh.len(), 1);
        // float32 in place: no f64 copy of the input, sums still in f64
        if let Tensor::F32(a) = x {
            if let Some(v) = a.as_slice() {
                let y: Vec<f32> = (0..n * c)
                    .map(|i| {
                        let s = &v[i * sp..(i + 1) * sp];
                        if max {
                            s.iter().fold(f32::NEG_INFINITY, |m, &e| m.max(e))
                        } else {
                            (s.iter().map(|&e| e as f64).sum::<f64>() / sp.max(1) as f64) as f32
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

pub fn global_average_pool(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(global_kernel(false))
}

pub fn global_max_pool(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(global_kernel(true))
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

    use crate::ops::kernel::RunCtx;
    use crate::ops::Attrs;
    use crate::proto::attribute_proto::AttributeType;
    use crate::proto::{AttributeProto, NodeProto};

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
        let mut runner = |_: &dyn crate::ops::kernel::Subgraph,
                          _: Vec<(String, Value)>|
         -> Result<Vec<Value>, KernelError> {
            Err(KernelError::new("no subgraphs"))
        };
        let mut cx = RunCtx {
            runner: &mut runner,
            parts: None,
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
    fn bad_inputs_are_errors_not_panics() {
        let x = Tensor::from_vec(&[2, 3], vec![0.0f32; 6]).unwrap();
        assert!(run(max_pool, vec![], 1, vec![x.clone()]).is_err());
        assert!(run(batch_norm, vec![], 1, vec![x.clone()]).is_err());
        assert!(run(lrn, vec![int_attr("size", 0)], 1, vec![x.clone()]).is_err());
        let w = Tensor::from_vec(&[1, 3, 1, 1], vec![1.0f32; 3]).unwrap();
        let x4 = Tensor::from_vec(&[1, 3, 1, 2], vec![0.0f32; 6]).unwrap();
        let conv = crate::ops::kernels::conv::conv;
        assert!(run(
            conv,
            vec![int_attr("group", 2)],
            1,
            vec![x4.clone(), w.clone()]
        )
        .is_err());
        assert!(run(conv, vec![], 1, vec![x, w]).is_err());
        assert!(run(conv, vec![int_attr("group", 0)], 1, vec![x4.clone(), x4]).is_err());
    }

    #[test]
    fn dropout_inference_is_identity_with_true_mask() {
        let x = Tensor::from_vec(&[3], vec![1.0f32, -2.0, 3.0]).unwrap();
        let out = run(dropout, vec![], 2, vec![x]).unwrap();
        assert_eq!(f64s(&out[0]), vec![1.0, -2.0, 3.0]);
        assert_eq!(f64s(&out[1]), vec![1.0, 1.0, 1.0]);
        assert_eq!(out[1].dtype(), DataType::Bool);
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
