//! Matrix products: MatMul (numpy semantics, batched with broadcasting).
//! f32/f64 go through `matrixmultiply`'s packed GEMM; other numeric types
//! use a plain loop with wrapping integer arithmetic.

use super::broadcast_shapes;
use super::elementwise::Num;
use crate::bail;
use crate::dispatch_num;
use crate::runtime::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Tensor, Value};
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
gemm_loop!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, half::bf16);

impl Gemm for f32 {
    fn gemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        // SAFETY: a, b, c are contiguous row-major buffers of m*k, k*n and
        // m*n elements (checked by the caller), with the strides given.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }
}

impl Gemm for f64 {
    fn gemm(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
        // SAFETY: as for f32.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }
}

fn matmul_typed<T: Gemm>(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
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

pub fn matmul(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        let y = dispatch_num!(
            a,
            matmul_typed(a, b),
            bail!("MatMul does not accept {}", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}
