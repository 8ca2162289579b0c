//! The matrix product engine: MatMul's numpy semantics (batched with
//! broadcasting), shared by MatMul, Gemm and the convolutions.
//! f32 products of 16 columns or more run on the convolution micro-kernels
//! (`conv_f32::gemm_into`); the rest of f32 and f64 go through
//! `matrixmultiply`'s packed GEMM (split into row blocks
//! over the rayon pool, so `config threads` governs it); other numeric types
//! use a plain loop with wrapping integer arithmetic.

use super::broadcast_shapes;
use super::numeric::Num;
use crate::bail;
use crate::ops::kernel::KernelError;
use crate::tensor::Tensor;
use ndarray::ArrayD;

/// A row-major GEMM `c = a(m×k) · b(k×n)` on contiguous slices.
pub trait Gemm: Num {
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

macro_rules! gemm_loop {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
                for i in 0..m {
                    let row = &mut c[i * n..(i + 1) * n];
                    row.iter_mut().for_each(|v| *v = <$t as Num>::zero());
                    for p in 0..k {
                        let x = a[i * k + p];
                        let brow = &b[p * n..(p + 1) * n];
                        for (o, &y) in row.iter_mut().zip(brow) {
                            *o = o.add(x.mul(y));
                        }
                    }
                }
            }
        }
    )*};
}
gemm_loop!(i8, i16, i32, i64, u8, u16, u32, u64);

/// float16 / bfloat16: products accumulate in f32 and each result is
/// rounded to the type once (as numpy and onnxruntime do), not after
/// every addition.
macro_rules! gemm_half {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
                let bf: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
                let mut acc = vec![0.0f32; n];
                for i in 0..m {
                    acc.iter_mut().for_each(|v| *v = 0.0);
                    for p in 0..k {
                        let x = a[i * k + p].to_f32();
                        for (o, &y) in acc.iter_mut().zip(&bf[p * n..(p + 1) * n]) {
                            *o += x * y;
                        }
                    }
                    for (o, &v) in c[i * n..(i + 1) * n].iter_mut().zip(&acc) {
                        *o = <$t>::from_f32(v);
                    }
                }
            }
        }
    )*};
}
gemm_half!(half::f16, half::bf16);

/// `c = a · b` for a left operand of at most [`SMALL_M`] rows (matrix-vector,
/// one token at a time): `b` is read once, in place and in order (no packed
/// copy), in column blocks of [`SMALL_NB`] so that the rows of `c` being
/// updated stay in cache, four rows of `b` per pass over them.
const SMALL_M: usize = 4;
const SMALL_NB: usize = 1024;

fn gemm_small_m_f32(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let blocks = n.div_ceil(SMALL_NB);
    // below 4 M multiply-adds the threads' wake-up and the copy of each
    // block's part cost more than the split saves (SLANet's Loop: 2 threads
    // were 9% slower than one)
    if crate::ops::kernels::threads::current() > 1
        && blocks > 1
        && k.saturating_mul(n) >= 4 * PAR_MIN_MACS
    {
        // column blocks in parallel, each into its own m x SMALL_NB buffer
        use rayon::prelude::*;
        let parts: Vec<(usize, Vec<f32>)> = (0..blocks)
            .into_par_iter()
            .map(|bi| {
                let (jb, je) = (bi * SMALL_NB, ((bi + 1) * SMALL_NB).min(n));
                let mut part = vec![0f32; m * (je - jb)];
                small_m_columns(m, k, n, a, b, (jb, je), &mut part, je - jb, 0);
                (jb, part)
            })
            .collect();
        for (jb, part) in parts {
            let w = part.len() / m.max(1);
            for i in 0..m {
                c[i * n + jb..i * n + jb + w].copy_from_slice(&part[i * w..(i + 1) * w]);
            }
        }
        return;
    }
    c.fill(0.0);
    for bi in 0..blocks {
        let (jb, je) = (bi * SMALL_NB, ((bi + 1) * SMALL_NB).min(n));
        small_m_columns(m, k, n, a, b, (jb, je), c, n, jb);
    }
}

/// Columns `jb..je` of `a · b` added into `c`, whose row `i` starts at
/// `i * ldc` and whose column `jb` is at offset `c0` within the row;
/// [`small_m_columns_plain`] compiled for the widest vector unit this CPU
/// has (the same sums in the same order on every path).
#[allow(clippy::too_many_arguments)]
fn small_m_columns(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    b: &[f32],
    cols: (usize, usize),
    c: &mut [f32],
    ldc: usize,
    c0: usize,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F
            return unsafe { small_m_columns_avx512(m, k, n, a, b, cols, c, ldc, c0) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2
            return unsafe { small_m_columns_avx2(m, k, n, a, b, cols, c, ldc, c0) };
        }
    }
    small_m_columns_plain(m, k, n, a, b, cols, c, ldc, c0)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn small_m_columns_avx512(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    b: &[f32],
    cols: (usize, usize),
    c: &mut [f32],
    ldc: usize,
    c0: usize,
) {
    small_m_columns_plain(m, k, n, a, b, cols, c, ldc, c0)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn small_m_columns_avx2(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    b: &[f32],
    cols: (usize, usize),
    c: &mut [f32],
    ldc: usize,
    c0: usize,
) {
    small_m_columns_plain(m, k, n, a, b, cols, c, ldc, c0)
}

/// The loops of [`small_m_columns`], inlined into each instruction-set
/// variant.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn small_m_columns_plain(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    b: &[f32],
    (jb, je): (usize, usize),
    c: &mut [f32],
    ldc: usize,
    c0: usize,
) {
    let w = je - jb;
    {
        let mut kk = 0;
        while kk + 4 <= k {
            let w0 = &b[kk * n + jb..kk * n + je];
            let w1 = &b[(kk + 1) * n + jb..(kk + 1) * n + je];
            let w2 = &b[(kk + 2) * n + jb..(kk + 2) * n + je];
            let w3 = &b[(kk + 3) * n + jb..(kk + 3) * n + je];
            for i in 0..m {
                let x = &a[i * k + kk..i * k + kk + 4];
                let (x0, x1, x2, x3) = (x[0], x[1], x[2], x[3]);
                let ci = &mut c[i * ldc + c0..i * ldc + c0 + w];
                for ((((cv, &v0), &v1), &v2), &v3) in ci.iter_mut().zip(w0).zip(w1).zip(w2).zip(w3)
                {
                    *cv += x0 * v0 + x1 * v1 + x2 * v2 + x3 * v3;
                }
            }
            kk += 4;
        }
        while kk < k {
            let row = &b[kk * n + jb..kk * n + je];
            for i in 0..m {
                let x = a[i * k + kk];
                let ci = &mut c[i * ldc + c0..i * ldc + c0 + w];
                for (cv, &v) in ci.iter_mut().zip(row) {
                    *cv += x * v;
                }
            }
            kk += 1;
        }
    }
}

/// A strided operand of [`par_gemm`]: its first element and the steps
/// between rows and between columns, in elements.
#[derive(Clone, Copy)]
pub(crate) struct Operand<T> {
    pub(crate) ptr: *const T,
    pub(crate) row: isize,
    pub(crate) col: isize,
}

/// matrixmultiply's `sgemm` / `dgemm`: (m, k, n, alpha, a, a's row and
/// column strides, b, b's strides, beta, c, c's strides).
type PackedGemm<T> = unsafe fn(
    usize,
    usize,
    usize,
    T,
    *const T,
    isize,
    isize,
    *const T,
    isize,
    isize,
    T,
    *mut T,
    isize,
    isize,
);

/// Products smaller than this many multiply-adds run on one thread.
const PAR_MIN_MACS: usize = 1 << 20;
/// Fewest rows of the output one thread computes.
const PAR_MIN_ROWS: usize = 32;

/// `c = alpha · a(m×k) · b(k×n) + beta · c` with `c` row-major (row stride
/// `n`), through `matrixmultiply`. A large product is split into blocks of
/// rows, one per thread of the current rayon pool, so `config threads N`
/// decides how many cores it uses (matrixmultiply's own threading, which
/// ignores the pool, is not compiled in).
///
/// # Safety
/// `a` and `b` must address m×k and k×n elements with the given strides,
/// and `c` must address m×n writable elements, not overlapping `a` or `b`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn par_gemm<T: Copy + Send + Sync>(
    gemm: PackedGemm<T>,
    (m, k, n): (usize, usize, usize),
    alpha: T,
    a: Operand<T>,
    b: Operand<T>,
    beta: T,
    c: *mut T,
) {
    let threads = crate::ops::kernels::threads::current();
    let blocks = if threads > 1 && m.saturating_mul(k).saturating_mul(n) >= PAR_MIN_MACS {
        threads.min(m / PAR_MIN_ROWS).max(1)
    } else {
        1
    };
    if blocks == 1 {
        gemm(
            m, k, n, alpha, a.ptr, a.row, a.col, b.ptr, b.row, b.col, beta, c, n as isize, 1,
        );
        return;
    }
    let per = m.div_ceil(blocks);
    // raw pointers are not Send: the blocks receive addresses, and each
    // writes a disjoint range of rows of `c`
    let (pa, pb, pc) = (a.ptr as usize, b.ptr as usize, c as usize);
    let elem = std::mem::size_of::<T>() as isize;
    use rayon::prelude::*;
    (0..blocks).into_par_iter().for_each(|bi| {
        let r0 = bi * per;
        let rows = per.min(m.saturating_sub(r0));
        if rows == 0 {
            return;
        }
        let a0 = (pa as isize + r0 as isize * a.row * elem) as *const T;
        let c0 = (pc + r0 * n * elem as usize) as *mut T;
        // SAFETY: rows r0..r0+rows of a and c lie within the extents the
        // caller guarantees; blocks write disjoint rows of c.
        unsafe {
            gemm(
                rows,
                k,
                n,
                alpha,
                a0,
                a.row,
                a.col,
                pb as *const T,
                b.row,
                b.col,
                beta,
                c0,
                n as isize,
                1,
            )
        }
    });
}

/// [`par_gemm`] on contiguous row-major buffers of m*k, k*n and m*n
/// elements (checked by the callers of [`Gemm::gemm`]).
fn packed_row_major<T: Copy + Send + Sync>(
    gemm: PackedGemm<T>,
    (one, zero): (T, T),
    (m, k, n): (usize, usize, usize),
    (a, b, c): (&[T], &[T], &mut [T]),
) {
    let a = Operand {
        ptr: a.as_ptr(),
        row: k as isize,
        col: 1,
    };
    let b = Operand {
        ptr: b.as_ptr(),
        row: n as isize,
        col: 1,
    };
    // SAFETY: a, b, c are contiguous row-major buffers of m*k, k*n and
    // m*n elements, and c is borrowed mutably apart from a and b.
    unsafe { par_gemm(gemm, (m, k, n), one, a, b, zero, c.as_mut_ptr()) }
}

impl Gemm for f64 {
    fn gemm(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
        packed_row_major(matrixmultiply::dgemm, (1.0, 0.0), (m, k, n), (a, b, c))
    }
}

/// Fewest columns a product needs to run on the convolution kernels,
/// whose tiles are 16 or 32 columns wide (a narrower product would compute
/// mostly discarded columns); matrixmultiply's 8x8 kernel takes the rest.
const GEMM_CONV_MIN_N: usize = 16;

impl Gemm for f32 {
    fn gemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        if m <= SMALL_M {
            gemm_small_m_f32(m, k, n, a, b, c);
        } else if n >= GEMM_CONV_MIN_N && super::conv_f32::gemm_into(m, k, n, a, b, c) {
            // done on the convolution's 6x16 / 12x32 micro-kernels
        } else {
            packed_row_major(matrixmultiply::sgemm, (1.0, 0.0), (m, k, n), (a, b, c))
        }
    }
}

pub(crate) fn matmul_typed<T: Gemm>(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let (Some(x), Some(y)) = (T::view(a), T::view(b)) else {
        bail!(
            "MatMul operands must have one type, got {} and {}",
            a.dtype(),
            b.dtype()
        );
    };
    Ok(T::wrap(matmul_arrays(x, y)?))
}

/// numpy `matmul` of two arrays.
pub fn matmul_arrays<T: Gemm>(x: &ArrayD<T>, y: &ArrayD<T>) -> Result<ArrayD<T>, KernelError> {
    if x.ndim() == 0 || y.ndim() == 0 {
        bail!(
            "MatMul operands must have rank >= 1, got {:?} and {:?}",
            x.shape(),
            y.shape()
        );
    }
    let mut xs = x.shape().to_vec();
    let mut ys = y.shape().to_vec();
    let x1 = xs.len() == 1;
    let y1 = ys.len() == 1;
    if x1 {
        xs.insert(0, 1);
    }
    if y1 {
        ys.push(1);
    }
    let (m, k) = (xs[xs.len() - 2], xs[xs.len() - 1]);
    let (k2, n) = (ys[ys.len() - 2], ys[ys.len() - 1]);
    if k != k2 {
        bail!(
            "MatMul inner dimensions differ: {:?} · {:?} ({k} vs {k2})",
            x.shape(),
            y.shape()
        );
    }
    let batch = broadcast_shapes(&xs[..xs.len() - 2], &ys[..ys.len() - 2])?;
    let mut out_shape = batch.clone();
    out_shape.extend([m, n]);
    crate::tensor::budget::check(&out_shape, std::mem::size_of::<T>())?;
    let nb: usize = batch.iter().product();
    let xa = x.as_standard_layout();
    let ya = y.as_standard_layout();
    let xd = xa.as_slice().expect("standard layout");
    let yd = ya.as_slice().expect("standard layout");
    let xb = &xs[..xs.len() - 2];
    let yb = &ys[..ys.len() - 2];
    let offset = |idx: usize, shape: &[usize]| -> usize {
        // index into a (possibly broadcast) batch shape
        let mut rem = idx;
        let mut off = 0;
        let mut stride = 1;
        for (i, &d) in batch.iter().enumerate().rev() {
            let c = rem % d;
            rem /= d;
            let j = i as isize - (batch.len() - shape.len()) as isize;
            if j >= 0 {
                let sd = shape[j as usize];
                if sd != 1 {
                    off += c * stride;
                }
                stride *= sd;
            }
        }
        off
    };
    let mut out = vec![T::zero(); nb * m * n];
    for bi in 0..nb {
        let xo = offset(bi, xb) * m * k;
        let yo = offset(bi, yb) * k * n;
        T::gemm(
            m,
            k,
            n,
            &xd[xo..xo + m * k],
            &yd[yo..yo + k * n],
            &mut out[bi * m * n..(bi + 1) * m * n],
        );
    }
    let mut shape = batch;
    if !x1 {
        shape.push(m);
    }
    if !y1 {
        shape.push(n);
    }
    Ok(ArrayD::from_shape_vec(ndarray::IxDyn(&shape), out)?)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A deterministic test matrix of values in [-1, 1.75] (the GEMM tests
    /// of Gemm share it).
    pub(crate) fn arr(shape: &[usize], seed: usize) -> ArrayD<f32> {
        let n: usize = shape.iter().product();
        let v = (0..n).map(|i| ((i * 7919 + seed) % 23) as f32 * 0.125 - 1.0);
        ArrayD::from_shape_vec(ndarray::IxDyn(shape), v.collect()).unwrap()
    }

    /// A rayon pool of `n` threads.
    pub(crate) fn pool(n: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    }

    #[test]
    fn row_blocks_on_two_threads_give_the_one_thread_product() {
        let (x, y) = (arr(&[3, 150, 300], 1), arr(&[300, 70], 2));
        let one = pool(1).install(|| matmul_arrays(&x, &y).unwrap());
        let two = pool(2).install(|| matmul_arrays(&x, &y).unwrap());
        assert_eq!(one, two);
        // against a plain triple loop
        let mut want = 0f64;
        for p in 0..300 {
            want += x[[2, 149, p]] as f64 * y[[p, 69]] as f64;
        }
        assert!((one[[2, 149, 69]] as f64 - want).abs() < 1e-3);
        // a few left rows against a wide weight: column blocks in parallel
        let (x, y) = (arr(&[3, 512], 6), arr(&[512, 2500], 7));
        let one = pool(1).install(|| matmul_arrays(&x, &y).unwrap());
        let two = pool(2).install(|| matmul_arrays(&x, &y).unwrap());
        assert_eq!(one, two);
        let mut want = 0f64;
        for p in 0..512 {
            want += x[[2, p]] as f64 * y[[p, 2499]] as f64;
        }
        assert!((one[[2, 2499]] as f64 - want).abs() < 1e-3);
    }

    #[test]
    fn small_left_operand_matches_the_packed_gemm() {
        // m = 1..=4 take the in-place path, m = 5 the conv kernels; k with a
        // remainder of four, n across a column block
        let (k, n) = (7, SMALL_NB + 3);
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        for m in 1..=5 {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 5) as f32 - 2.0).collect();
            let mut c = vec![f32::NAN; m * n];
            <f32 as Gemm>::gemm(m, k, n, &a, &b, &mut c);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                    assert_eq!(c[i * n + j], want, "m={m} i={i} j={j}");
                }
            }
        }
    }

    #[test]
    fn half_matmul_accumulates_in_f32() {
        // 1 + 8 * 2^-9 = 1 + 2^-6 is a bfloat16, but 1 + 2^-9 rounds back
        // to 1: a sum rounded after each addition would stay at 1
        let a: Vec<half::bf16> = std::iter::once(1.0)
            .chain(std::iter::repeat_n(1.0 / 512.0, 8))
            .map(half::bf16::from_f32)
            .collect();
        let b = vec![half::bf16::ONE; 9];
        let mut c = vec![half::bf16::ZERO; 1];
        half::bf16::gemm(1, 9, 1, &a, &b, &mut c);
        assert_eq!(c[0].to_f32(), 1.0 + 1.0 / 64.0);
    }
}
