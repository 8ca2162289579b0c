//! Softmax, LogSoftmax and Hardmax over an axis (before opset 13: over
//! the flattened axes from `axis` on). One file with a module per
//! operator: they differ in one function.

use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::kernels::norm_axis;
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Tensor;
use ndarray::ArrayD;

use super::float_input::float_in;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SoftKind {
    Softmax,
    LogSoftmax,
    Hardmax,
}

/// Splits a shape into (outer, axis length, inner) for a softmax-like op:
/// before opset 13 the input is coerced to 2-D at `axis`; from 13 on the
/// operation runs along the single axis.
pub(super) fn soft_split(
    shape: &[usize],
    axis: i64,
    opset: i64,
) -> Result<(usize, usize, usize), KernelError> {
    let r = shape.len();
    if opset < 13 {
        let a = if r == 0 {
            0
        } else if axis == r as i64 {
            r
        } else {
            norm_axis(axis, r)?
        };
        let outer: usize = shape[..a].iter().product();
        let len: usize = shape[a..].iter().product();
        Ok((outer, len, 1))
    } else {
        if r == 0 {
            return Ok((1, 1, 1));
        }
        let a = norm_axis(axis, r)?;
        Ok((
            shape[..a].iter().product(),
            shape[a],
            shape[a + 1..].iter().product(),
        ))
    }
}

fn soft_compute(kind: SoftKind, v: &mut [f64], outer: usize, len: usize, inner: usize) {
    let mut buf = vec![0.0; len];
    for o in 0..outer {
        for i in 0..inner {
            let base = o * len * inner + i;
            for (j, b) in buf.iter_mut().enumerate() {
                *b = v[base + j * inner];
            }
            match kind {
                SoftKind::Hardmax => {
                    let mut best = 0;
                    for j in 1..len {
                        if buf[j] > buf[best] {
                            best = j;
                        }
                    }
                    for (j, b) in buf.iter_mut().enumerate() {
                        *b = if j == best { 1.0 } else { 0.0 };
                    }
                }
                _ => {
                    let m = buf.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let s: f64 = buf.iter().map(|x| (x - m).exp()).sum();
                    for b in buf.iter_mut() {
                        *b = if kind == SoftKind::Softmax {
                            (*b - m).exp() / s
                        } else {
                            *b - m - s.ln()
                        };
                    }
                }
            }
            for (j, b) in buf.iter().enumerate() {
                v[base + j * inner] = *b;
            }
        }
    }
}

fn soft_kernel(info: &NodeInfo, kind: SoftKind) -> Result<Kernel, KernelError> {
    let opset = info.opset;
    let axis = info.attrs.int_or("axis", if opset < 13 { 1 } else { -1 });
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "softmax")?;
        let (outer, len, inner) = soft_split(x.shape(), axis, opset)?;
        if let (Tensor::F32(a), 1, SoftKind::Softmax | SoftKind::LogSoftmax) = (x, inner, kind) {
            if let Some(src) = a.as_slice() {
                let log = kind == SoftKind::LogSoftmax;
                let y = crate::ops::kernels::rows_f32::softmax_rows(src, len, log);
                return Ok(vec![
                    Tensor::F32(ArrayD::from_shape_vec(a.raw_dim(), y)?).into()
                ]);
            }
        }
        let mut v = to_f64s(x, "input")?;
        soft_compute(kind, &mut v, outer, len, inner);
        Ok(vec![from_f64s(x.dtype(), x.shape(), v)?.into()])
    }))
}

/// Softmax / LogSoftmax / Hardmax: same as the input, with an axis check.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(r) = cx.rank(0) {
        let def = if cx.opset < 13 { 1 } else { -1 };
        let axis = cx.attrs.int_or("axis", def);
        if r > 0 && !(cx.opset < 13 && axis == r as i64) {
            norm_axis(axis, r)?;
        }
    }
    same_as_input(cx)
}

/// One operator of the family: the shared rule, the kernel of its kind.
macro_rules! soft_op {
    ($module:ident, $kind:ident) => {
        pub mod $module {
            pub use super::shape;
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

            pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
                super::soft_kernel(info, super::SoftKind::$kind)
            }
        }
    };
}

soft_op!(softmax, Softmax);
soft_op!(log_softmax, LogSoftmax);
soft_op!(hardmax, Hardmax);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_sum_to_one_and_hardmax_first_max() {
        let mut v = vec![1.0, 2.0, 3.0, 3.0, 3.0, 0.0];
        soft_compute(SoftKind::Softmax, &mut v, 2, 3, 1);
        assert!((v[..3].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut h = vec![1.0, 3.0, 3.0, 0.0];
        soft_compute(SoftKind::Hardmax, &mut h, 1, 4, 1);
        assert_eq!(h, vec![0.0, 1.0, 0.0, 0.0]);
        assert_eq!(soft_split(&[2, 3, 4], 1, 11).unwrap(), (2, 12, 1));
        assert_eq!(soft_split(&[2, 3, 4], 1, 13).unwrap(), (2, 3, 4));
    }
}
