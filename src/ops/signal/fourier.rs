//! The transform the DFT and STFT share: a direct DFT of one complex
//! sequence, and the longest length accepted.

use std::f64::consts::PI;

/// Largest transform length accepted (the direct O(n²) transform is used).
pub(super) const MAX_LEN: usize = 1 << 20;

/// Direct DFT of a complex sequence (re, im) of length `n_out` (the input is
/// zero-padded or truncated to it).
pub(super) fn dft_1d(re: &[f64], im: &[f64], n: usize, inverse: bool) -> (Vec<f64>, Vec<f64>) {
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
}
