//! Signal processing kernels: DFT, STFT, the window generators and
//! MelWeightMatrix.

use super::f64_values::{f64_of, float_like, float_of, num_from_f64};
use super::manip::ints_in;
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};
use std::f64::consts::PI;

/// Largest transform length accepted (the direct O(n²) transform is used).
const MAX_LEN: usize = 1 << 20;

/// Direct DFT of a complex sequence (re, im) of length `n_out` (the input is
/// zero-padded or truncated to it).
fn dft_1d(re: &[f64], im: &[f64], n: usize, inverse: bool) -> (Vec<f64>, Vec<f64>) {
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut ore = vec![0.0; n];
    let mut oim = vec![0.0; n];
    let m = re.len().min(n);
    for k in 0..n {
        let (mut sr, mut si) = (0.0, 0.0);
        for t in 0..m {
            let ang = sign * 2.0 * PI * ((k * t) % n) as f64 / n as f64;
            let (s, c) = ang.sin_cos();
            sr += re[t] * c - im[t] * s;
            si += re[t] * s + im[t] * c;
        }
        if inverse {
            sr /= n as f64;
            si /= n as f64;
        }
        ore[k] = sr;
        oim[k] = si;
    }
    (ore, oim)
}

fn single_int(ins: &[Option<&Value>], i: usize, what: &str) -> Result<Option<i64>, KernelError> {
    if opt_tensor_in(ins, i)?.is_none() {
        return Ok(None);
    }
    match ints_in(ins, i)?[..] {
        [v] => Ok(Some(v)),
        _ => bail!("{what} must be a single integer"),
    }
}

pub fn dft(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let opset = info.opset;
    let attr_axis = info.attrs.int_or("axis", 1);
    let inverse = info.attrs.int_or("inverse", 0) != 0;
    let onesided = info.attrs.int_or("onesided", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("DFT input must be a float tensor, got {}", x.dtype());
        }
        let sh = x.shape().to_vec();
        let r = sh.len();
        if r < 2 || !(sh[r - 1] == 1 || sh[r - 1] == 2) {
            bail!("DFT input must have a last dimension of 1 or 2, got shape {sh:?}");
        }
        let axis = if opset >= 20 {
            single_int(ins, 2, "axis")?.unwrap_or(-2)
        } else {
            attr_axis
        };
        let ax = if axis < 0 { axis + r as i64 } else { axis };
        if ax < 0 || ax >= r as i64 - 1 {
            bail!("DFT axis {axis} is out of range for rank {r}");
        }
        let ax = ax as usize;
        let n_in = sh[ax];
        let complex = sh[r - 1] == 2;
        let half_input = inverse && onesided;
        let n = match single_int(ins, 1, "dft_length")? {
            Some(l) if l <= 0 => bail!("dft_length must be positive, got {l}"),
            Some(l) => l as usize,
            None if half_input => 2 * n_in.saturating_sub(1),
            None => n_in,
        };
        if n == 0 || n > MAX_LEN {
            bail!("DFT length {n} is not supported");
        }
        let out_n = if onesided && !inverse { n / 2 + 1 } else { n };
        let out_c = if half_input { 1 } else { 2 };
        let v = f64_of(x, "input")?;
        let outer: usize = sh[..ax].iter().product();
        let inner: usize = sh[ax + 1..r - 1].iter().product();
        let c = sh[r - 1];
        let mut out_shape = sh.clone();
        out_shape[ax] = out_n;
        out_shape[r - 1] = out_c;
        let total = outer
            .checked_mul(out_n)
            .and_then(|t| t.checked_mul(inner))
            .and_then(|t| t.checked_mul(out_c))
            .filter(|&t| t <= 1 << 31)
            .ok_or_else(|| KernelError::new("DFT output is too large"))?;
        let mut out = vec![0.0; total];
        for o in 0..outer {
            for i in 0..inner {
                let at = |t: usize| ((o * n_in + t) * inner + i) * c;
                let mut re: Vec<f64> = (0..n_in).map(|t| v[at(t)]).collect();
                let mut im: Vec<f64> = (0..n_in)
                    .map(|t| if complex { v[at(t) + 1] } else { 0.0 })
                    .collect();
                if half_input {
                    // Rebuild the full spectrum by Hermitian symmetry.
                    let mut fr = vec![0.0; n];
                    let mut fi = vec![0.0; n];
                    for k in 0..n {
                        if k < n_in {
                            fr[k] = re[k];
                            fi[k] = im[k];
                        } else if n - k < n_in {
                            fr[k] = re[n - k];
                            fi[k] = -im[n - k];
                        }
                    }
                    re = fr;
                    im = fi;
                }
                let (yr, yi) = dft_1d(&re, &im, n, inverse);
                for k in 0..out_n {
                    let d = ((o * out_n + k) * inner + i) * out_c;
                    out[d] = yr[k];
                    if out_c == 2 {
                        out[d + 1] = yi[k];
                    }
                }
            }
        }
        Ok(vec![Value::Tensor(float_like(x, &out_shape, out)?)])
    }))
}

pub fn stft(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let onesided = info.attrs.int_or("onesided", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("STFT signal must be a float tensor, got {}", x.dtype());
        }
        let sh = x.shape().to_vec();
        if sh.len() != 3 || !(sh[2] == 1 || sh[2] == 2) {
            bail!("STFT signal must have shape [batch, length, 1|2], got {sh:?}");
        }
        let step = single_int(ins, 1, "frame_step")?
            .ok_or_else(|| KernelError::new("frame_step is missing"))?;
        if step <= 0 {
            bail!("frame_step must be positive, got {step}");
        }
        let window = match opt_tensor_in(ins, 2)? {
            Some(w) => {
                if w.rank() != 1 {
                    bail!("window must be 1-D, got shape {:?}", w.shape());
                }
                Some(f64_of(w, "window")?)
            }
            None => None,
        };
        let flen = match (single_int(ins, 3, "frame_length")?, &window) {
            (Some(l), Some(w)) if l as usize != w.len() => {
                bail!(
                    "frame_length {l} differs from the window length {}",
                    w.len()
                )
            }
            (Some(l), _) if l <= 0 => bail!("frame_length must be positive, got {l}"),
            (Some(l), _) => l as usize,
            (None, Some(w)) => w.len(),
            (None, None) => bail!("STFT needs a window or a frame_length"),
        };
        if flen == 0 || flen > MAX_LEN {
            bail!("frame length {flen} is not supported");
        }
        let (b, len, c) = (sh[0], sh[1], sh[2]);
        if flen > len {
            bail!("frame_length {flen} exceeds the signal length {len}");
        }
        let frames = (len - flen) / step as usize + 1;
        let bins = if onesided { flen / 2 + 1 } else { flen };
        let v = f64_of(x, "signal")?;
        let mut out = Vec::with_capacity(b * frames * bins * 2);
        for bi in 0..b {
            for f in 0..frames {
                let start = f * step as usize;
                let w = |t: usize| window.as_ref().map_or(1.0, |w| w[t]);
                let re: Vec<f64> = (0..flen)
                    .map(|t| v[(bi * len + start + t) * c] * w(t))
                    .collect();
                let im: Vec<f64> = (0..flen)
                    .map(|t| {
                        if c == 2 {
                            v[(bi * len + start + t) * c + 1] * w(t)
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let (yr, yi) = dft_1d(&re, &im, flen, false);
                for k in 0..bins {
                    out.push(yr[k]);
                    out.push(yi[k]);
                }
            }
        }
        Ok(vec![Value::Tensor(float_like(
            x,
            &[b, frames, bins, 2],
            out,
        )?)])
    }))
}

fn out_type(info: &NodeInfo) -> Result<DataType, KernelError> {
    let code = info.attrs.int_or("output_datatype", 1);
    DataType::from_code(code as i32)
        .filter(|d| d.is_float() || d.is_int())
        .ok_or_else(|| KernelError::new(format!("unsupported output_datatype {code}")))
}

fn typed_out(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    if matches!(
        dt,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    ) {
        float_of(dt, shape, v)
    } else {
        num_from_f64(dt, shape, v)
    }
}

fn window_kernel(info: &NodeInfo, f: fn(f64, f64) -> f64) -> Result<Kernel, KernelError> {
    let dt = out_type(info)?;
    let periodic = info.attrs.int_or("periodic", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let size =
            single_int(ins, 0, "size")?.ok_or_else(|| KernelError::new("size is missing"))?;
        if size < 0 || size as usize > MAX_LEN {
            bail!("window size {size} is not supported");
        }
        let n = size as usize;
        let denom = if periodic { n as f64 } else { n as f64 - 1.0 };
        let v: Vec<f64> = (0..n)
            .map(|i| if denom > 0.0 { f(i as f64, denom) } else { 1.0 })
            .collect();
        Ok(vec![Value::Tensor(typed_out(dt, &[n], v)?)])
    }))
}

pub fn hann_window(info: &NodeInfo) -> Result<Kernel, KernelError> {
    window_kernel(info, |i, n| 0.5 - 0.5 * (2.0 * PI * i / n).cos())
}

pub fn hamming_window(info: &NodeInfo) -> Result<Kernel, KernelError> {
    window_kernel(info, |i, n| {
        let a = 25.0 / 46.0;
        a - (1.0 - a) * (2.0 * PI * i / n).cos()
    })
}

pub fn blackman_window(info: &NodeInfo) -> Result<Kernel, KernelError> {
    window_kernel(info, |i, n| {
        0.42 - 0.5 * (2.0 * PI * i / n).cos() + 0.08 * (4.0 * PI * i / n).cos()
    })
}

fn scalar_f(ins: &[Option<&Value>], i: usize, what: &str) -> Result<f64, KernelError> {
    let t = tensor_in(ins, i)?;
    match f64_of(t, what)?[..] {
        [v] => Ok(v),
        _ => bail!("{what} must be a scalar"),
    }
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

pub fn mel_weight_matrix(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
    fn dft_roundtrip_and_impulse() {
        let (r, i) = dft_1d(&[1.0, 0.0, 0.0, 0.0], &[0.0; 4], 4, false);
        assert!(r.iter().all(|v| (v - 1.0).abs() < 1e-12));
        assert!(i.iter().all(|v| v.abs() < 1e-12));
        let x = [1.0, 2.0, -3.0, 0.5, 4.0];
        let (fr, fi) = dft_1d(&x, &[0.0; 5], 5, false);
        let (br, bi) = dft_1d(&fr, &fi, 5, true);
        for k in 0..5 {
            assert!((br[k] - x[k]).abs() < 1e-9 && bi[k].abs() < 1e-9);
        }
    }

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
