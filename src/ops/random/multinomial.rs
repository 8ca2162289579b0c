//! `Multinomial`: `sample_size` class draws per batch row from its
//! unnormalised log-probabilities.

use super::stream::stream_of;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = match cx.attrs.int_or("dtype", 6) {
        7 => DataType::Int64,
        _ => DataType::Int32,
    };
    let batch = cx.shape(0).and_then(|s| s.first().cloned()).flatten();
    let n = cx.attrs.int_or("sample_size", 1);
    cx.set_tensor(0, dt, Some(vec![batch, Some(crate::expr::Expr::int(n))]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
