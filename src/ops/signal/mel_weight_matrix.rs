//! `MelWeightMatrix`: the triangular mel filter bank,
//! (dft_length/2 + 1) × num_mel_bins.

use super::signal_io::{out_datatype, out_type, scalar_f, single_int, typed_out};
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::int_dim;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = out_datatype(cx)?;
    let mel = cx
        .ints(0)
        .and_then(|v| v.first().copied())
        .and_then(int_dim);
    let dft = cx
        .ints(1)
        .and_then(|v| v.first().copied())
        .and_then(|d| int_dim(d / 2 + 1));
    cx.set_tensor(0, dt, Some(vec![dft, mel]));
    Ok(())
}

/// The triangular mel filter bank, (dft_length/2 + 1) × num_mel_bins.
pub fn mel_matrix(mel: usize, dft_len: usize, rate: f64, lo: f64, hi: f64) -> Vec<f64> {
    let bins = dft_len / 2 + 1;
    let to_mel = |hz: f64| 2595.0 * (1.0 + hz / 700.0).log10();
    let (ml, mh) = (to_mel(lo), to_mel(hi));
    let step = (mh - ml) / (mel + 2) as f64;
    let edges: Vec<i64> = (0..mel + 2)
        .map(|i| {
            let hz = 700.0 * (10f64.powf((ml + i as f64 * step) / 2595.0) - 1.0);
            ((dft_len as f64 + 1.0) * hz / rate).floor() as i64
        })
        .collect();
    let mut out = vec![0.0; bins * mel];
    let mut set = |j: i64, i: usize, v: f64| {
        if j >= 0 && (j as usize) < bins {
            out[j as usize * mel + i] = v;
        }
    };
    for i in 0..mel {
        let (l, c, h) = (edges[i], edges[i + 1], edges[i + 2]);
        if c == l {
            set(c, i, 1.0);
        } else {
            for j in l..=c {
                set(j, i, (j - l) as f64 / (c - l) as f64);
            }
        }
        if h > c {
            for j in c..h {
                set(j, i, (h - j) as f64 / (h - c) as f64);
            }
        }
    }
    out
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dt = out_type(info)?;
    Ok(Box::new(move |_, ins| {
        let mel = single_int(ins, 0, "num_mel_bins")?
            .ok_or_else(|| KernelError::new("num_mel_bins is missing"))?;
        let dft_len = single_int(ins, 1, "dft_length")?
            .ok_or_else(|| KernelError::new("dft_length is missing"))?;
        let rate = single_int(ins, 2, "sample_rate")?
            .ok_or_else(|| KernelError::new("sample_rate is missing"))?;
        let lo = scalar_f(ins, 3, "lower_edge_hertz")?;
        let hi = scalar_f(ins, 4, "upper_edge_hertz")?;
        if mel <= 0 || dft_len <= 0 || rate <= 0 || mel > 1 << 16 || dft_len > 1 << 24 {
            bail!("num_mel_bins, dft_length and sample_rate must be positive and reasonable");
        }
        let (mel, dft_len) = (mel as usize, dft_len as usize);
        let v = mel_matrix(mel, dft_len, rate as f64, lo, hi);
        Ok(vec![Value::Tensor(typed_out(
            dt,
            &[dft_len / 2 + 1, mel],
            v,
        )?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mel_rows_are_triangles() {
        let m = mel_matrix(4, 64, 8000.0, 0.0, 4000.0);
        assert_eq!(m.len(), 33 * 4);
        assert!(m.iter().all(|&v| (0.0..=1.0).contains(&v)));
        for i in 0..4 {
            assert!((0..33).any(|j| m[j * 4 + i] == 1.0));
        }
    }
}
