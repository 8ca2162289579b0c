//! f32 fast paths of the row-wise operators: Softmax / LogSoftmax along an
//! axis and LayerNormalization over trailing axes, on contiguous float32
//! tensors (the shape of attention and transformer blocks).
//!
//! Rows are independent, so they are split across the rayon pool when the
//! tensor is large enough. Each row's sums accumulate in f64, so the results
//! agree with the f64 paths of `nn.rs` to float32 rounding; the elementwise
//! work (exp, scale, shift) stays in f32 and needs no f64 copy of the input.

use super::vector_unit::widest_fn;
use rayon::prelude::*;

/// Rows handled per rayon task: enough elements that a task outweighs its
/// scheduling cost.
const TASK_ELEMENTS: usize = 1 << 14;

/// Calls `f(rows_of_x, rows_of_y, first_row)` over chunks of whole rows of
/// length `len` of `x`, each with its rows of `y` (`y_per_row` items per
/// row: the output row, or one statistic), in parallel when there is more
/// than one thread and work.
fn for_row_chunks<T: Send, F>(x: &[f32], y: &mut [T], len: usize, y_per_row: usize, f: F)
where
    F: Fn(&[f32], &mut [T], usize) + Sync,
{
    if len == 0 {
        return;
    }
    let rows_per_task = (TASK_ELEMENTS / len).max(1);
    let chunk = rows_per_task * len;
    if x.len() > chunk && crate::ops::kernels::threads::current() > 1 {
        y.par_chunks_mut(rows_per_task * y_per_row)
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
    for_row_chunks(x, &mut y, len, len, |xs, ys, _| {
        softmax_chunk(xs, ys, len, log)
    });
    y
}

widest_fn! {
    /// [`softmax_rows`] of whole rows `xs` into `ys`.
    fn softmax_chunk(xs: &[f32], ys: &mut [f32], len: usize, log: bool) {
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
    }
}

/// Lanes of the partial maxima and sums: independent accumulators the
/// compiler keeps in one vector register.
const LANES: usize = 16;

/// The largest element of a row (NaN if any is NaN, as a sequential fold
/// with `f32::max` would not guarantee).
#[inline(always)]
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
#[inline(always)]
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

/// The sum of `f(v)` over a row, in f64 with [`F64_LANES`] independent
/// partial sums (a single running sum waits on each addition's latency).
#[inline(always)]
fn lane_sum_f64(row: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0f64; F64_LANES];
    let mut chunks = row.chunks_exact(F64_LANES);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f(v as f64);
        }
    }
    let tail: f64 = chunks.remainder().iter().map(|&v| f(v as f64)).sum();
    acc.iter().sum::<f64>() + tail
}

widest_fn! {
    /// Each row's mean and inverse standard deviation (f64 sums).
    fn row_stats(xs: &[f32], len: usize, eps: f64, stats: &mut [(f64, f64)]) {
        let n = len as f64;
        for (s, row) in stats.iter_mut().zip(xs.chunks_exact(len)) {
            let mean = lane_sum_f64(row, |v| v) / n;
            let var = lane_sum_f64(row, |v| {
                let d = v - mean;
                d * d
            }) / n;
            *s = (mean, 1.0 / (var + eps).sqrt());
        }
    }
}

widest_fn! {
    /// `(x - mean) * inv * scale + bias` of whole rows `xs` into `ys`.
    fn normalise_chunk(
        xs: &[f32],
        ys: &mut [f32],
        len: usize,
        stats: &[(f64, f64)],
        scale: &[f32],
        bias: Option<&[f32]>,
    ) {
        for ((row, out), &(mean, inv)) in xs.chunks_exact(len).zip(ys.chunks_exact_mut(len)).zip(stats) {
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
    }
}

/// Partial sums of [`lane_sum_f64`]: two AVX2 registers of f64.
const F64_LANES: usize = 8;

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
    for_row_chunks(x, &mut stats, len, 1, |xs, s, _| row_stats(xs, len, eps, s));
    let stats_ref = &stats;
    for_row_chunks(x, &mut y, len, len, |xs, ys, first| {
        let stats = &stats_ref[first..first + xs.len() / len];
        normalise_chunk(xs, ys, len, stats, scale, bias)
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
