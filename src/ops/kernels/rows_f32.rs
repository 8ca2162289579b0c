//! f32 fast paths of the row-wise operators: Softmax / LogSoftmax along an
//! axis and LayerNormalization over trailing axes, on contiguous float32
//! tensors (the shape of attention and transformer blocks).
//!
//! Rows are independent, so they are split across the rayon pool when the
//! tensor is large enough. Each row's sums accumulate in f64, so the results
//! agree with the f64 paths of `nn.rs` to float32 rounding; the elementwise
//! work (exp, scale, shift) stays in f32 and needs no f64 copy of the input.

use rayon::prelude::*;

/// Rows handled per rayon task: enough elements that a task outweighs its
/// scheduling cost.
const TASK_ELEMENTS: usize = 1 << 14;

/// Calls `f(rows_of_x, rows_of_y, first_row)` over chunks of whole rows of
/// length `len`, in parallel when there is more than one thread and work.
fn for_row_chunks<F>(x: &[f32], y: &mut [f32], len: usize, f: F)
where
    F: Fn(&[f32], &mut [f32], usize) + Sync,
{
    if len == 0 {
        return;
    }
    let rows_per_task = (TASK_ELEMENTS / len).max(1);
    let chunk = rows_per_task * len;
    if x.len() > chunk && crate::ops::kernels::threads::current() > 1 {
        y.par_chunks_mut(chunk)
            .zip(x.par_chunks(chunk))
            .enumerate()
            .for_each(|(i, (yc, xc))| f(xc, yc, i * rows_per_task));
    } else {
        f(x, y, 0);
    }
}

/// Softmax (or LogSoftmax when `log`) of every row of length `len` of a
/// contiguous tensor whose softmax axis is the last one (inner size 1).
pub fn softmax_rows(x: &[f32], len: usize, log: bool) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    for_row_chunks(x, &mut y, len, |xs, ys, _| {
        for (row, out) in xs.chunks_exact(len).zip(ys.chunks_exact_mut(len)) {
            let m = row_max(row);
            for (o, &v) in out.iter_mut().zip(row) {
                *o = super::exp_f32::exp(v - m);
            }
            let sum = row_sum(out);
            if log {
                let shift = m + sum.ln() as f32;
                for (o, &v) in out.iter_mut().zip(row) {
                    *o = v - shift;
                }
            } else {
                let inv = (1.0 / sum) as f32;
                out.iter_mut().for_each(|o| *o *= inv);
            }
        }
    });
    y
}

/// Lanes of the partial maxima and sums: independent accumulators the
/// compiler keeps in one vector register.
const LANES: usize = 16;

/// The largest element of a row (NaN if any is NaN, as a sequential fold
/// with `f32::max` would not guarantee).
fn row_max(row: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut chunks = row.chunks_exact(LANES);
    let mut nan = false;
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            nan |= v.is_nan();
            *a = if v > *a { v } else { *a };
        }
    }
    let mut m = chunks.remainder().iter().fold(f32::NEG_INFINITY, |a, &v| {
        nan |= v.is_nan();
        if v > a {
            v
        } else {
            a
        }
    });
    for a in acc {
        m = m.max(a);
    }
    if nan {
        f32::NAN
    } else {
        m
    }
}

/// The sum of a row of non-negative terms: float32 partial sums in
/// [`LANES`] lanes, added in f64 (each lane sums len/16 terms).
fn row_sum(row: &[f32]) -> f64 {
    let mut acc = [0f32; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    let tail: f64 = chunks.remainder().iter().map(|&v| v as f64).sum();
    acc.iter().map(|&a| a as f64).sum::<f64>() + tail
}

/// LayerNormalization of every row of length `len`:
/// `(x - mean) / sqrt(var + eps) * scale + bias`, with `scale` and `bias`
/// (if any) of length `len`.
/// Returns the output and each row's mean and inverse standard deviation.
pub fn layer_norm_rows(
    x: &[f32],
    len: usize,
    eps: f64,
    scale: &[f32],
    bias: Option<&[f32]>,
) -> (Vec<f32>, Vec<f64>, Vec<f64>) {
    let rows = x.len().checked_div(len).unwrap_or(0);
    let mut y = vec![0f32; x.len()];
    let mut stats = vec![(0f64, 0f64); rows];
    // the per-row statistics are computed first (cheap), then the rows are
    // written in parallel from them
    let stat = |row: &[f32]| {
        let n = len as f64;
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = row
            .iter()
            .map(|&v| {
                let d = v as f64 - mean;
                d * d
            })
            .sum::<f64>()
            / n;
        (mean, 1.0 / (var + eps).sqrt())
    };
    if len > 0 {
        if x.len() > TASK_ELEMENTS && crate::ops::kernels::threads::current() > 1 {
            stats
                .par_iter_mut()
                .zip(x.par_chunks_exact(len))
                .for_each(|(s, row)| *s = stat(row));
        } else {
            for (s, row) in stats.iter_mut().zip(x.chunks_exact(len)) {
                *s = stat(row);
            }
        }
    }
    let stats_ref = &stats;
    for_row_chunks(x, &mut y, len, |xs, ys, first| {
        for (r, (row, out)) in xs
            .chunks_exact(len)
            .zip(ys.chunks_exact_mut(len))
            .enumerate()
        {
            let (mean, inv) = stats_ref[first + r];
            let (mean, inv) = (mean as f32, inv as f32);
            match bias {
                Some(b) => {
                    for (((o, &v), &s), &b) in out.iter_mut().zip(row).zip(scale).zip(b) {
                        *o = (v - mean) * inv * s + b;
                    }
                }
                None => {
                    for ((o, &v), &s) in out.iter_mut().zip(row).zip(scale) {
                        *o = (v - mean) * inv * s;
                    }
                }
            }
        }
    });
    let (means, invs) = stats.into_iter().unzip();
    (y, means, invs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_match_the_definition() {
        let x = [1.0f32, 2.0, 3.0, -1.0, 0.0, 1000.0];
        let y = softmax_rows(&x, 3, false);
        let e = [1f64.exp(), 2f64.exp(), 3f64.exp()];
        let s: f64 = e.iter().sum();
        for j in 0..3 {
            assert!((y[j] as f64 - e[j] / s).abs() < 1e-6);
        }
        // a large value does not overflow: the row's max is subtracted
        assert_eq!(y[5], 1.0);
        assert_eq!(y[3], 0.0);
        let l = softmax_rows(&x, 3, true);
        for j in 0..3 {
            assert!((l[j] as f64 - (e[j] / s).ln()).abs() < 1e-5);
        }
    }

    #[test]
    fn layer_norm_rows_standardise_each_row() {
        let x: Vec<f32> = (0..8).map(|i| i as f32 * i as f32).collect();
        let scale = [1.0f32, 2.0, 1.0, 0.5];
        let bias = [0.0f32, 1.0, 0.0, -1.0];
        let (y, means, invs) = layer_norm_rows(&x, 4, 1e-5, &scale, Some(&bias));
        for r in 0..2 {
            let row: Vec<f64> = x[r * 4..r * 4 + 4].iter().map(|&v| v as f64).collect();
            let m = row.iter().sum::<f64>() / 4.0;
            let var = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 4.0;
            let inv = 1.0 / (var + 1e-5).sqrt();
            assert!((means[r] - m).abs() < 1e-12);
            assert!((invs[r] - inv).abs() < 1e-12);
            for j in 0..4 {
                let want = (row[j] - m) * inv * scale[j] as f64 + bias[j] as f64;
                assert!((y[r * 4 + j] as f64 - want).abs() < 1e-5, "{r} {j}");
            }
        }
    }

    #[test]
    fn many_rows_split_across_tasks_give_the_same_rows() {
        let len = 100;
        let x: Vec<f32> = (0..len * 500)
            .map(|i| ((i * 37) % 101) as f32 / 10.0)
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let par = pool.install(|| softmax_rows(&x, len, false));
        let seq = softmax_rows(&x[..len], len, false);
        assert_eq!(&par[..len], &seq[..]);
        let last = &x[x.len() - len..];
        assert_eq!(&par[x.len() - len..], &softmax_rows(last, len, false)[..]);
    }
}
