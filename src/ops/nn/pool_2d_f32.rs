//! Fast path for the common pooling case: f32, NCHW, 2-D windows without
//! dilation. One plane per task (rayon), no per-element index arithmetic
//! beyond the window bounds. The general N-D path lives in `nn.rs`.

use crate::ops::kernels::vector_unit::widest_fn;
use rayon::prelude::*;

/// The geometry of a 2-D pooling window.
#[derive(Clone, Copy, Debug)]
pub struct Pool2d {
    pub h: usize,
    pub w: usize,
    pub kernel: [usize; 2],
    pub strides: [usize; 2],
    pub pad_begin: [usize; 2],
    pub pad_end: [usize; 2],
    pub out: [usize; 2],
}

/// What the window computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool2dKind {
    Max,
    /// Average; with `include_pad` the divisor counts padded positions too.
    Avg {
        include_pad: bool,
    },
}

/// Pools `planes` planes of `g.h × g.w` f32 values.
pub fn pool2d_f32(x: &[f32], planes: usize, g: &Pool2d, kind: Pool2dKind) -> Vec<f32> {
    let (oh, ow) = (g.out[0], g.out[1]);
    let mut y = vec![0f32; planes * oh * ow];
    if oh == 0 || ow == 0 {
        return y;
    }
    let plane_in = g.h * g.w;
    let one = |(yp, xp): (&mut [f32], &[f32])| match kind {
        Pool2dKind::Max => max_plane(xp, yp, g),
        Pool2dKind::Avg { include_pad } => avg_plane(xp, yp, g, include_pad),
    };
    if planes > 1 && crate::ops::kernels::threads::current() > 1 {
        y.par_chunks_mut(oh * ow)
            .zip(x.par_chunks(plane_in.max(1)))
            .for_each(one);
    } else {
        y.chunks_mut(oh * ow)
            .zip(x.chunks(plane_in.max(1)))
            .for_each(one);
    }
    y
}

/// The larger of `m` and `v`, NaN winning (numpy's `maximum`), as a select
/// the compiler vectorises. Neither arm is `m` itself: `*c = max_nan(*c, v)`
/// written as "v if larger, else m" becomes a masked store with AVX2
/// (`vmaskmovps`, microcoded on AMD: MaxPool 64x111x111 took 1.1 ms, 0.5 ms
/// this way).
#[inline(always)]
fn max_nan(m: f32, v: f32) -> f32 {
    if m.is_nan() | v.is_nan() {
        m + v
    } else {
        m.max(v)
    }
}

/// Splits `cols` into `s` phases of `ceil(len / s)` values each: phase `p`
/// holds columns `p, p + s, ...`.
#[inline(always)]
fn split_phases(cols: &[f32], phases: &mut [f32], s: usize) {
    let pw = cols.len().div_ceil(s);
    if s == 2 {
        // even and odd columns in one pass (vectorised as shuffles)
        let (ev, od) = phases.split_at_mut(pw);
        for ((e, o), c) in ev.iter_mut().zip(od.iter_mut()).zip(cols.chunks_exact(2)) {
            (*e, *o) = (c[0], c[1]);
        }
        if let [.., last] = cols {
            if cols.len() % 2 == 1 {
                ev[pw - 1] = *last;
            }
        }
        return;
    }
    for (p, ph) in phases.chunks_exact_mut(pw).enumerate() {
        for (d, &v) in ph.iter_mut().zip(cols[p..].iter().step_by(s)) {
            *d = v;
        }
    }
}

/// What a separable window pass combines: max (NaN winning) or sum.
trait WindowReduce {
    const INIT: f32;
    fn op(m: f32, v: f32) -> f32;
    /// `op` on 8 lanes.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn op8(
        m: std::arch::x86_64::__m256,
        v: std::arch::x86_64::__m256,
    ) -> std::arch::x86_64::__m256;
}

struct MaxNan;
impl WindowReduce for MaxNan {
    const INIT: f32 = f32::NEG_INFINITY;
    #[inline(always)]
    fn op(m: f32, v: f32) -> f32 {
        max_nan(m, v)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn op8(
        m: std::arch::x86_64::__m256,
        v: std::arch::x86_64::__m256,
    ) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's CPU has AVX2 (AVX is part of it)
        unsafe {
            // max_nan: NaN in either lane wins (m + v is NaN there)
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(m, v);
            _mm256_blendv_ps(_mm256_max_ps(m, v), _mm256_add_ps(m, v), nan)
        }
    }
}

struct Sum;
impl WindowReduce for Sum {
    const INIT: f32 = 0.0;
    #[inline(always)]
    fn op(m: f32, v: f32) -> f32 {
        m + v
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn op8(
        m: std::arch::x86_64::__m256,
        v: std::arch::x86_64::__m256,
    ) -> std::arch::x86_64::__m256 {
        // SAFETY: the caller's CPU has AVX2 (AVX is part of it)
        unsafe { std::arch::x86_64::_mm256_add_ps(m, v) }
    }
}

/// Window heights and widths [`reduce_slices`] takes (taller or wider
/// windows run the passes one slice at a time).
const MAX_SLICES: usize = 16;

/// `out[i]` = the reduction of `srcs[..][i]` (each source at least as long
/// as `out`).
#[inline(always)]
fn reduce_slices<R: WindowReduce>(out: &mut [f32], srcs: &[&[f32]]) {
    #[cfg(target_arch = "x86_64")]
    if out.len() >= 8 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2
        return unsafe { reduce_slices_avx2::<R>(out, srcs) };
    }
    let Some((first, rest)) = srcs.split_first() else {
        out.fill(R::INIT);
        return;
    };
    out.copy_from_slice(&first[..out.len()]);
    for r in rest {
        for (o, &x) in out.iter_mut().zip(*r) {
            *o = R::op(*o, x);
        }
    }
}

/// [`reduce_slices`] in blocks of 8 values in one register, the last
/// block overlapping the one before it instead of a scalar tail (each
/// block is a pure function of the sources, so a value computed twice is
/// the same value). The compiler left the tails of short rows scalar:
/// MaxPool 3x3 stride 2 over 55x55 planes made 48 vector and 7 scalar
/// steps of each row pass, and scalar steps were most of the samples.
///
/// # Safety
/// The CPU must have AVX2; `out` holds at least 8 values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn reduce_slices_avx2<R: WindowReduce>(out: &mut [f32], srcs: &[&[f32]]) {
    use std::arch::x86_64::*;
    let n = out.len();
    let Some((first, rest)) = srcs.split_first() else {
        out.fill(R::INIT);
        return;
    };
    assert!(n >= 8 && first.len() >= n && rest.iter().all(|r| r.len() >= n));
    let mut start = 0;
    loop {
        let at = start.min(n - 8);
        // SAFETY: at + 8 <= n, and every source holds n values
        unsafe {
            let mut acc = _mm256_loadu_ps(first.as_ptr().add(at));
            for r in rest {
                acc = R::op8(acc, _mm256_loadu_ps(r.as_ptr().add(at)));
            }
            _mm256_storeu_ps(out.as_mut_ptr().add(at), acc);
        }
        if at + 8 == n {
            return;
        }
        start += 8;
    }
}

/// Reduces each window of one plane separably: for each output row, the
/// elementwise reduction of its window's input rows (contiguous), then
/// that of each window's columns in that row. For a stride s > 1 the row
/// results are first split into s phases (phase p holds columns p, p + s,
/// ...), so each window column of a run of outputs is a contiguous slice of
/// one phase and every pass is a plain elementwise loop the compiler
/// vectorises. Padded positions are left out.
#[inline(always)]
fn separable<R: WindowReduce>(xp: &[f32], yp: &mut [f32], g: &Pool2d) {
    let (h, w) = (g.h as isize, g.w);
    let (kh, kw) = (g.kernel[0] as isize, g.kernel[1] as isize);
    let (pt, pl) = (g.pad_begin[0] as isize, g.pad_begin[1] as isize);
    let sw = g.strides[1].max(1);
    let pw = w.div_ceil(sw);
    let mut cols = vec![R::INIT; w];
    let mut phases = vec![R::INIT; pw * sw];
    // interior windows (wholly inside the row) are the outputs [lo, hi)
    let ow = g.out[1];
    let inside = |ox: usize| {
        let x0 = (ox * sw) as isize - pl;
        x0 >= 0 && x0 + kw <= w as isize
    };
    let lo = (0..ow).find(|&ox| inside(ox)).unwrap_or(ow);
    let hi = (lo..ow).find(|&ox| !inside(ox)).unwrap_or(ow);
    for (oy, yrow) in yp.chunks_mut(ow.max(1)).enumerate() {
        let y0 = oy as isize * g.strides[0] as isize - pt;
        let (ya, yb) = (y0.max(0), (y0 + kh).min(h));
        let row = |yy: isize| &xp[yy as usize * w..(yy as usize + 1) * w];
        if yb - ya <= MAX_SLICES as isize {
            let mut rows: [&[f32]; MAX_SLICES] = [&[]; MAX_SLICES];
            for (r, yy) in rows.iter_mut().zip(ya..yb) {
                *r = row(yy);
            }
            reduce_slices::<R>(&mut cols, &rows[..(yb - ya).max(0) as usize]);
        } else {
            cols.fill(R::INIT);
            for yy in ya..yb {
                for (c, &v) in cols.iter_mut().zip(row(yy)) {
                    *c = R::op(*c, v);
                }
            }
        }
        if lo < hi {
            let first = ((lo * sw) as isize - pl) as usize;
            let run = &mut yrow[lo..hi];
            let n = run.len();
            // window column t of the run's first output: phase t % s, from t / s
            let at = |t: usize| (t % sw) * pw + t / sw;
            let src: &[f32] = if sw == 1 {
                &cols
            } else {
                split_phases(&cols, &mut phases, sw);
                &phases
            };
            if kw as usize <= MAX_SLICES {
                let mut srcs: [&[f32]; MAX_SLICES] = [&[]; MAX_SLICES];
                for (j, c) in srcs.iter_mut().enumerate().take(kw as usize) {
                    *c = &src[at(first + j)..at(first + j) + n];
                }
                reduce_slices::<R>(run, &srcs[..kw as usize]);
            } else {
                run.copy_from_slice(&src[at(first)..at(first) + n]);
                for j in 1..kw as usize {
                    let col = &src[at(first + j)..at(first + j) + n];
                    for (o, &v) in run.iter_mut().zip(col) {
                        *o = R::op(*o, v);
                    }
                }
            }
        }
        // windows that the row's ends clip
        for ox in (0..lo).chain(hi..yrow.len()) {
            let x0 = ox as isize * sw as isize - pl;
            let (xa, xb) = (x0.max(0) as usize, (x0 + kw).clamp(0, w as isize) as usize);
            yrow[ox] = cols[xa..xb.max(xa)]
                .iter()
                .fold(R::INIT, |m, &v| R::op(m, v));
        }
    }
}

widest_fn! {
/// Max pooling of one plane (see [`separable`]).
fn max_plane(xp: &[f32], yp: &mut [f32], g: &Pool2d) {
    separable::<MaxNan>(xp, yp, g)
}
}

widest_fn! {
/// The sum of each window of one plane (see [`separable`]), divided by the
/// window's count of input positions, or with `include_pad` of input and
/// padded positions (a window past the padded end, in ceil mode, counts
/// only up to it); an empty window gives 0.
fn avg_plane(xp: &[f32], yp: &mut [f32], g: &Pool2d, include_pad: bool) {
    separable::<Sum>(xp, yp, g);
    let count = |o: usize, axis: usize, len: usize| {
        let x0 = (o * g.strides[axis]) as isize - g.pad_begin[axis] as isize;
        let k = g.kernel[axis] as isize;
        let n = if include_pad {
            (x0 + k).min((len + g.pad_end[axis]) as isize) - x0.max(-(g.pad_begin[axis] as isize))
        } else {
            (x0 + k).min(len as isize) - x0.max(0)
        };
        n.max(0) as f32
    };
    let cols: Vec<f32> = (0..g.out[1]).map(|ox| count(ox, 1, g.w)).collect();
    for (oy, yrow) in yp.chunks_mut(g.out[1].max(1)).enumerate() {
        let rows = count(oy, 0, g.h);
        for (v, &c) in yrow.iter_mut().zip(&cols) {
            let n = rows * c;
            *v = if n == 0.0 { 0.0 } else { *v / n };
        }
    }
}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pooling of one plane, window by window: the separable passes'
    /// reference.
    fn plane(xp: &[f32], yp: &mut [f32], g: &Pool2d, kind: Pool2dKind) {
        let (h, w) = (g.h as isize, g.w as isize);
        let (kh, kw) = (g.kernel[0] as isize, g.kernel[1] as isize);
        let (pt, pl) = (g.pad_begin[0] as isize, g.pad_begin[1] as isize);
        let (hp, wp) = (h + g.pad_end[0] as isize, w + g.pad_end[1] as isize);
        for oy in 0..g.out[0] {
            let y0 = oy as isize * g.strides[0] as isize - pt;
            let (ya, yb) = (y0.max(0), (y0 + kh).min(h));
            let rows_padded = (y0 + kh).min(hp) - y0.max(-pt);
            for ox in 0..g.out[1] {
                let x0 = ox as isize * g.strides[1] as isize - pl;
                let (xa, xb) = (x0.max(0), (x0 + kw).min(w));
                let v = match kind {
                    Pool2dKind::Max => {
                        let mut m = f32::NEG_INFINITY;
                        for yy in ya..yb {
                            let row = &xp[(yy * w) as usize..((yy + 1) * w) as usize];
                            for &v in &row[xa as usize..xb.max(xa) as usize] {
                                if v > m || v.is_nan() {
                                    m = v;
                                }
                            }
                        }
                        m
                    }
                    Pool2dKind::Avg { include_pad } => {
                        let mut s = 0f32;
                        for yy in ya..yb {
                            let row = &xp[(yy * w) as usize..((yy + 1) * w) as usize];
                            s += row[xa as usize..xb.max(xa) as usize].iter().sum::<f32>();
                        }
                        let n = if include_pad {
                            let cols_padded = (x0 + kw).min(wp) - x0.max(-pl);
                            rows_padded.max(0) * cols_padded.max(0)
                        } else {
                            (yb - ya).max(0) * (xb - xa).max(0)
                        };
                        if n == 0 {
                            0.0
                        } else {
                            s / n as f32
                        }
                    }
                };
                yp[oy * g.out[1] + ox] = v;
            }
        }
    }

    #[test]
    fn max_and_average_with_padding() {
        // 3x3 plane 1..9, 2x2 windows, stride 1, pad 1 at the end
        let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
        let g = Pool2d {
            h: 3,
            w: 3,
            kernel: [2, 2],
            strides: [2, 2],
            pad_begin: [0, 0],
            pad_end: [1, 1],
            out: [2, 2],
        };
        assert_eq!(pool2d_f32(&x, 1, &g, Pool2dKind::Max), vec![5., 6., 8., 9.]);
        assert_eq!(
            pool2d_f32(&x, 1, &g, Pool2dKind::Avg { include_pad: false }),
            vec![3., 4.5, 7.5, 9.]
        );
        assert_eq!(
            pool2d_f32(&x, 1, &g, Pool2dKind::Avg { include_pad: true }),
            vec![3., 2.25, 3.75, 2.25]
        );
    }

    #[test]
    fn separable_max_and_average_agree_with_the_window_by_window_ones() {
        // odd and even widths (the stride-2 split has an odd tail), strides
        // 1 to 4, asymmetric pads and a NaN
        for (h, w, kernel, strides, pb, pe) in [
            (7, 9, [3, 3], [2, 2], [0, 0], [0, 0]),
            (7, 9, [2, 3], [1, 2], [1, 0], [0, 1]),
            (7, 9, [3, 2], [3, 1], [1, 1], [1, 1]),
            (6, 12, [3, 3], [2, 2], [1, 1], [1, 1]),
            (6, 12, [3, 5], [1, 3], [0, 2], [0, 1]),
            (6, 13, [2, 4], [2, 4], [0, 0], [0, 3]),
            // rows and runs of whole and partial 8-value blocks
            (9, 55, [3, 3], [2, 2], [0, 0], [0, 0]),
            (5, 37, [2, 3], [1, 1], [1, 1], [0, 1]),
            // taller and wider than the blocked passes take
            (20, 40, [17, 18], [1, 1], [0, 0], [0, 0]),
        ] {
            let mut x: Vec<f32> = (0..h * w).map(|i| ((i * 37 % 23) as f32) - 11.0).collect();
            x[20] = f32::NAN;
            let out = [
                (h + pb[0] + pe[0] - kernel[0]) / strides[0] + 1,
                (w + pb[1] + pe[1] - kernel[1]) / strides[1] + 1,
            ];
            let g = Pool2d {
                h,
                w,
                kernel,
                strides,
                pad_begin: pb,
                pad_end: pe,
                out,
            };
            let fast = pool2d_f32(&x, 1, &g, Pool2dKind::Max);
            let mut slow = vec![0f32; out[0] * out[1]];
            plane(&x, &mut slow, &g, Pool2dKind::Max);
            assert_eq!(fast.len(), slow.len());
            for (a, b) in fast.iter().zip(&slow) {
                assert!(a == b || (a.is_nan() && b.is_nan()), "{fast:?} vs {slow:?}");
            }
            x[20] = 0.25;
            for include_pad in [false, true] {
                let kind = Pool2dKind::Avg { include_pad };
                let fast = pool2d_f32(&x, 1, &g, kind);
                plane(&x, &mut slow, &g, kind);
                for (a, b) in fast.iter().zip(&slow) {
                    assert!(
                        (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                        "{fast:?} vs {slow:?}"
                    );
                }
            }
        }
    }
}
