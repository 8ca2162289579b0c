//! Random generators: RandomUniform, RandomNormal, their `*Like` forms,
//! Bernoulli and Multinomial. A `seed` attribute makes a node reproducible;
//! without one, each run draws from a per-node stream that advances.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// xorshift64* — small, fast, and good enough for sampling.
struct Stream(u64);

impl Stream {
    fn new(seed: u64) -> Stream {
        Stream(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn uniform(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(f64::MIN_POSITIVE);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// The stream of one node: the seed attribute, or a counter that advances
/// at every run.
fn stream_of(info: &NodeInfo) -> impl Fn() -> Stream + Send + Sync {
    let seed = info.attrs.float("seed").map(|s| s.to_bits() as u64);
    let counter = Arc::new(AtomicU64::new(0x5EED));
    move || match seed {
        Some(s) => Stream::new(s),
        None => Stream::new(counter.fetch_add(1, Ordering::Relaxed)),
    }
}

fn dtype_attr(info: &NodeInfo, default: DataType) -> Result<DataType, KernelError> {
    match info.attrs.int("dtype") {
        None => Ok(default),
        Some(c) => DataType::from_code(c as i32)
            .filter(|t| t.is_float())
            .ok_or_else(|| KernelError::new(format!("dtype {c} is not a float type"))),
    }
}

fn checked_shape(shape: &[i64]) -> Result<Vec<usize>, KernelError> {
    let mut n: usize = 1;
    let mut out = Vec::with_capacity(shape.len());
    for &d in shape {
        if d < 0 {
            bail!("shape {shape:?} has a negative dimension");
        }
        n = n
            .checked_mul(d as usize)
            .filter(|&n| n <= 1 << 31)
            .ok_or_else(|| KernelError::new(format!("shape {shape:?} is too large")))?;
        out.push(d as usize);
    }
    Ok(out)
}

fn floats(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Value, KernelError> {
    Ok(Value::Tensor(Tensor::from_vec(shape, v)?.cast_to(dt)?))
}

fn generator(info: &NodeInfo, like: bool, normal: bool) -> Result<Kernel, KernelError> {
    let (a, b) = if normal {
        (
            info.attrs.float_or("mean", 0.0) as f64,
            info.attrs.float_or("scale", 1.0) as f64,
        )
    } else {
        (
            info.attrs.float_or("low", 0.0) as f64,
            info.attrs.float_or("high", 1.0) as f64,
        )
    };
    let fixed = if like {
        None
    } else {
        let s = info
            .attrs
            .ints("shape")
            .ok_or_else(|| KernelError::new("the 'shape' attribute is required"))?;
        Some(checked_shape(&s)?)
    };
    let dtype = info.attrs.int("dtype");
    let dt = dtype_attr(info, DataType::Float)?;
    let stream = stream_of(info);
    Ok(Box::new(move |_, ins| {
        let (shape, dt) = match &fixed {
            Some(s) => (s.clone(), dt),
            None => {
                let x = tensor_in(ins, 0)?;
                let t = if dtype.is_some() { dt } else { x.dtype() };
                if !t.is_float() {
                    bail!("the output type must be a float type, got {t}");
                }
                (x.shape().to_vec(), t)
            }
        };
        let n: usize = shape.iter().product();
        let mut s = stream();
        let v = (0..n)
            .map(|_| {
                if normal {
                    a + b * s.normal()
                } else {
                    a + (b - a) * s.uniform()
                }
            })
            .collect();
        Ok(vec![floats(dt, &shape, v)?])
    }))
}

pub fn random_uniform(info: &NodeInfo) -> Result<Kernel, KernelError> {
    generator(info, false, false)
}

pub fn random_normal(info: &NodeInfo) -> Result<Kernel, KernelError> {
    generator(info, false, true)
}

pub fn random_uniform_like(info: &NodeInfo) -> Result<Kernel, KernelError> {
    generator(info, true, false)
}

pub fn random_normal_like(info: &NodeInfo) -> Result<Kernel, KernelError> {
    generator(info, true, true)
}

pub fn bernoulli(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dtype = match info.attrs.int("dtype") {
        None => None,
        Some(c) => Some(
            DataType::from_code(c as i32)
                .ok_or_else(|| KernelError::new(format!("dtype {c} is not a type")))?,
        ),
    };
    let stream = stream_of(info);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("Bernoulli input must be a float tensor, got {}", x.dtype());
        }
        let p = x.to_f64_vec().unwrap_or_default();
        let mut s = stream();
        let v: Vec<f64> = p
            .iter()
            .map(|&p| if s.uniform() < p { 1.0 } else { 0.0 })
            .collect();
        let t = Tensor::from_vec(x.shape(), v)?.cast_to(dtype.unwrap_or(x.dtype()))?;
        Ok(vec![Value::Tensor(t)])
    }))
}

pub fn multinomial(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let samples = info.attrs.int_or("sample_size", 1);
    if !(1..=1 << 24).contains(&samples) {
        bail!("sample_size {samples} is out of range");
    }
    let dt = match info.attrs.int_or("dtype", 6) {
        6 => DataType::Int32,
        7 => DataType::Int64,
        c => bail!("Multinomial dtype must be int32 or int64, got {c}"),
    };
    let stream = stream_of(info);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if x.rank() != 2 || !x.dtype().is_float() {
            bail!(
                "Multinomial input must be a float [batch, classes] tensor, got {} {:?}",
                x.dtype(),
                x.shape()
            );
        }
        let (b, c) = (x.shape()[0], x.shape()[1]);
        let logits = x.to_f64_vec().unwrap_or_default();
        let mut s = stream();
        let mut out = Vec::with_capacity(b * samples as usize);
        for row in logits.chunks(c.max(1)).take(b) {
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = row.iter().map(|&l| (l - m).exp()).collect();
            let total: f64 = w.iter().sum();
            for _ in 0..samples {
                let mut u = s.uniform() * total;
                let mut k = c.saturating_sub(1);
                for (i, &wi) in w.iter().enumerate() {
                    if u < wi {
                        k = i;
                        break;
                    }
                    u -= wi;
                }
                out.push(k as f64);
            }
        }
        Ok(vec![Value::Tensor(
            Tensor::from_vec(&[b, samples as usize], out)?.cast_to(dt)?,
        )])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_streams_repeat_and_stay_in_range() {
        let mut a = Stream::new(7);
        let mut b = Stream::new(7);
        for _ in 0..100 {
            let (x, y) = (a.uniform(), b.uniform());
            assert_eq!(x, y);
            assert!((0.0..1.0).contains(&x));
        }
        let mean: f64 = (0..10000).map(|_| a.normal()).sum::<f64>() / 10000.0;
        assert!(mean.abs() < 0.05, "{mean}");
    }
}
