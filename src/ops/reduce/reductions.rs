//! The ten reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin,
//! ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
//! ReduceSumSquare): one engine and one shape rule, parameterised by the
//! reduction, so one file; each operator is a module of it ([`reduce_sum`],
//! ...) with the `shape` and `kernel` the table names.

use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::interleaved_sum;
use crate::ops::kernels::manip::opt_ints_in;
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::{norm_axis, typed};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use crate::value_type::Dim;
use crate::{bail, dispatch_num};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

/// Output shape of a reduction: reduced axes become 1 (keepdims) or vanish.
pub(super) fn reduced(shape: &[Dim], mask: &[bool], keep: bool) -> Vec<Dim> {
    shape
        .iter()
        .zip(mask)
        .filter_map(|(d, &m)| {
            if m {
                keep.then(|| Some(Expr::int(1)))
            } else {
                Some(d.clone())
            }
        })
        .collect()
}

/// The shape rule of every reduction.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let keep = cx.attrs.int_or("keepdims", 1) != 0;
    let noop = cx.attrs.int_or("noop_with_empty_axes", 0) != 0;
    // old attribute forms are upgraded by `graph::upgrade`: axes is input 1
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let axes: Option<Vec<i64>> = if cx.has_input(1) {
        match cx.ints(1) {
            Some(v) => Some(v),
            None => {
                // axes unknown: only the rank is known when keepdims
                let known_empty = cx
                    .shape(1)
                    .and_then(|s| s.first().cloned().flatten())
                    .and_then(|e| e.as_int())
                    == Some(0);
                if !known_empty {
                    let n = crate::ops::shape_rules::manip::input_len(cx, 1);
                    // which axes are reduced depends on data: each
                    // size is a fresh symbol (the input size or 1)
                    let k = if keep {
                        Some(r)
                    } else {
                        n.and_then(|n| r.checked_sub(n))
                    };
                    let out = k.map(|k| (0..k).map(|_| Some(cx.fresh())).collect());
                    cx.set_tensor(0, elem, out);
                    return Ok(());
                }
                Some(vec![])
            }
        }
    } else {
        None
    };
    let mask = match axes {
        Some(ax) if !ax.is_empty() => {
            let mut m = vec![false; r];
            for a in ax {
                m[norm_axis(a, r)?] = true;
            }
            m
        }
        _ => {
            if noop {
                cx.set_tensor(0, elem, Some(shape));
                return Ok(());
            }
            vec![true; r]
        }
    };
    cx.set_tensor(0, elem, Some(reduced(&shape, &mask, keep)));
    Ok(())
}

/// Which reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Red {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    LogSum,
    LogSumExp,
    SumSquare,
}

/// The elements of `a` with the masked axes moved last: (flat values,
/// number of groups, group length).
pub(super) fn grouped<T: Clone>(a: &ArrayD<T>, mask: &[bool]) -> (Vec<T>, usize, usize) {
    let perm: Vec<usize> = (0..mask.len())
        .filter(|&i| !mask[i])
        .chain((0..mask.len()).filter(|&i| mask[i]))
        .collect();
    let v = a.view().permuted_axes(IxDyn(&perm));
    let flat: Vec<T> = v.iter().cloned().collect();
    let r: usize = (0..mask.len())
        .filter(|&i| mask[i])
        .map(|i| a.shape()[i])
        .product();
    let groups: usize = (0..mask.len())
        .filter(|&i| !mask[i])
        .map(|i| a.shape()[i])
        .product();
    (flat, groups, r)
}

/// One group of elements to reduce, read in place: a contiguous slice, or
/// any view (the reduced axes of a non-contiguous layout).
enum Group<'a, T> {
    Slice(&'a [T]),
    View(ArrayViewD<'a, T>),
}

impl<T: Num> Group<'_, T> {
    fn len(&self) -> usize {
        match self {
            Group::Slice(s) => s.len(),
            Group::View(v) => v.len(),
        }
    }

    /// The f64 sum of `f(v)` over the group (a slice in interleaved partial
    /// sums, streamed at memory speed).
    fn sum(&self, f: impl Fn(f64) -> f64) -> f64 {
        match self {
            Group::Slice(s) => interleaved_sum(s, |v| f(v.to_f64())),
            Group::View(v) => v.iter().map(|&v| f(v.to_f64())).sum(),
        }
    }

    /// Folds the group's values, as f64, from `init`.
    fn fold(&self, init: f64, f: impl Fn(f64, f64) -> f64) -> f64 {
        match self {
            Group::Slice(s) => s.iter().fold(init, |a, &v| f(a, v.to_f64())),
            Group::View(v) => v.iter().fold(init, |a, &v| f(a, v.to_f64())),
        }
    }

    /// The group's values in order (for the integer reductions, which stay
    /// in the element type).
    fn for_each(&self, mut f: impl FnMut(T)) {
        match self {
            Group::Slice(s) => s.iter().for_each(|&v| f(v)),
            Group::View(v) => v.iter().for_each(|&v| f(v)),
        }
    }
}

/// A float reduction of one group, accumulated in f64 without copying it.
fn reduce_f64<T: Num>(op: Red, g: &Group<T>) -> f64 {
    match op {
        Red::Sum => g.sum(|v| v),
        Red::Mean => g.sum(|v| v) / g.len() as f64,
        Red::Max => g.fold(f64::NEG_INFINITY, |m, v| {
            if v.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.max(v)
            }
        }),
        Red::Min => g.fold(f64::INFINITY, |m, v| {
            if v.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.min(v)
            }
        }),
        Red::Prod => g.fold(1.0, |p, v| p * v),
        Red::L1 => g.sum(f64::abs),
        Red::L2 => g.sum(|v| v * v).sqrt(),
        Red::LogSum => g.sum(|v| v).ln(),
        Red::LogSumExp => {
            let m = g.fold(f64::NEG_INFINITY, f64::max);
            if m.is_infinite() {
                g.sum(f64::exp).ln()
            } else {
                m + g.sum(|v| (v - m).exp()).ln()
            }
        }
        Red::SumSquare => g.sum(|v| v * v),
    }
}

fn reduce_int<T: Num>(op: Red, g: &Group<T>) -> Result<T, KernelError> {
    let abs = |v: T| if v < T::zero() { T::zero().sub(v) } else { v };
    let fold = |init: T, f: &dyn Fn(T, T) -> T| {
        let mut a = init;
        g.for_each(|v| a = f(a, v));
        a
    };
    Ok(match op {
        Red::Sum => fold(T::zero(), &|a, v| a.add(v)),
        Red::Max => fold(T::from_f64(f64::NEG_INFINITY), &|a, v| {
            if v > a {
                v
            } else {
                a
            }
        }),
        Red::Min => fold(T::from_f64(f64::INFINITY), &|a, v| {
            if v < a {
                v
            } else {
                a
            }
        }),
        Red::Prod => fold(T::one(), &|a, v| a.mul(v)),
        Red::L1 => fold(T::zero(), &|a, v| a.add(abs(v))),
        Red::SumSquare => fold(T::zero(), &|a, v| a.add(v.mul(v))),
        Red::Mean | Red::L2 | Red::LogSum | Red::LogSumExp => T::from_f64(reduce_f64(op, g)),
    })
}

/// Reduces each group of `a` (the masked axes) in place: no copy of the
/// input, whatever its layout.
fn reduce_typed<T: Num>(x: &Tensor, mask: &[bool], op: Red) -> Result<Vec<T>, KernelError> {
    let a: &ArrayD<T> = typed(x, "data")?;
    // the kept axes first, then the reduced ones
    let perm: Vec<usize> = (0..mask.len())
        .filter(|&i| !mask[i])
        .chain((0..mask.len()).filter(|&i| mask[i]))
        .collect();
    let kept = mask.iter().filter(|&&m| !m).count();
    let v = a.view().permuted_axes(IxDyn(&perm));
    let kept_shape: Vec<usize> = v.shape()[..kept].to_vec();
    let groups: usize = kept_shape.iter().product();
    let mut out = Vec::with_capacity(groups);
    let one = |g: Group<T>| -> Result<T, KernelError> {
        if T::IS_FLOAT {
            Ok(T::from_f64(reduce_f64(op, &g)))
        } else {
            reduce_int(op, &g)
        }
    };
    if let (true, Some(flat)) = (a.is_standard_layout(), v.as_slice()) {
        // the reduced axes are the last ones (or all): contiguous groups
        let r = flat.len().checked_div(groups).unwrap_or(0);
        for g in 0..groups {
            out.push(one(Group::Slice(&flat[g * r..(g + 1) * r]))?);
        }
        return Ok(out);
    }
    for idx in ndarray::indices(IxDyn(&kept_shape)) {
        use ndarray::Dimension;
        let mut sub = v.view();
        for &i in idx.slice() {
            sub = sub.index_axis_move(Axis(0), i);
        }
        let g = match sub.to_slice() {
            Some(s) => Group::Slice(s),
            None => Group::View(sub),
        };
        out.push(one(g)?);
    }
    Ok(out)
}

fn reduce_wrap<T: Num>(
    x: &Tensor,
    mask: &[bool],
    op: Red,
    shape: &[usize],
) -> Result<Tensor, KernelError> {
    let v = reduce_typed::<T>(x, mask, op)?;
    Ok(T::wrap(ArrayD::from_shape_vec(IxDyn(shape), v)?))
}

/// Reduces `x` over the masked axes.
pub fn reduce_tensor(
    x: &Tensor,
    mask: &[bool],
    keep: bool,
    op: Red,
) -> Result<Tensor, KernelError> {
    let shape: Vec<usize> = x
        .shape()
        .iter()
        .zip(mask)
        .filter_map(|(&d, &m)| if m { keep.then_some(1) } else { Some(d) })
        .collect();
    if let Tensor::Bool(b) = x {
        if !matches!(op, Red::Max | Red::Min) {
            bail!("{op:?} does not accept bool");
        }
        let u = Tensor::U8(b.mapv(u8::from));
        let r = reduce_wrap::<u8>(&u, mask, op, &shape)?;
        let Tensor::U8(r) = r else {
            bail!("internal: bool reduction")
        };
        // the empty max is false, the empty min true
        return Ok(Tensor::Bool(r.mapv(|v| v != 0)));
    }
    dispatch_num!(
        x,
        reduce_wrap(x, mask, op, &shape),
        bail!("{op:?} does not accept {}", x.dtype())
    )
}

fn reduce_builder(info: &NodeInfo, op: Red) -> Result<Kernel, KernelError> {
    let keep = info.attrs.int_or("keepdims", 1) != 0;
    let noop = info.attrs.int_or("noop_with_empty_axes", 0) != 0;
    let _ = op;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axes = opt_ints_in(ins, 1)?;
        let r = x.rank();
        let mut mask = vec![false; r];
        match axes {
            Some(ax) if !ax.is_empty() => {
                for a in ax {
                    mask[norm_axis(a, r)?] = true;
                }
            }
            _ => {
                if noop {
                    return Ok(vec![Value::Tensor(x.clone())]);
                }
                mask = vec![true; r];
            }
        }
        Ok(vec![Value::Tensor(reduce_tensor(x, &mask, keep, op)?)])
    }))
}

/// One reduction operator: the shared rule, and the engine's kernel for
/// its reduction.
macro_rules! reduction {
    ($module:ident, $op:expr) => {
        pub mod $module {
            pub use super::shape;
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

            pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
                super::reduce_builder(info, $op)
            }
        }
    };
}

reduction!(reduce_sum, super::Red::Sum);
reduction!(reduce_mean, super::Red::Mean);
reduction!(reduce_max, super::Red::Max);
reduction!(reduce_min, super::Red::Min);
reduction!(reduce_prod, super::Red::Prod);
reduction!(reduce_l1, super::Red::L1);
reduction!(reduce_l2, super::Red::L2);
reduction!(reduce_log_sum, super::Red::LogSum);
reduction!(reduce_log_sum_exp, super::Red::LogSumExp);
reduction!(reduce_sum_square, super::Red::SumSquare);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_over_middle_axis() {
        let x = Tensor::from_vec(&[2, 3, 2], (0..12).map(|v| v as f32).collect()).unwrap();
        let y = reduce_tensor(&x, &[false, true, false], false, Red::Sum).unwrap();
        assert_eq!(
            y,
            Tensor::from_vec(&[2, 2], vec![6f32, 9., 24., 27.]).unwrap()
        );
    }

    #[test]
    fn sum_of_two_to_the_28_float_ones_is_exact() {
        // a float32 running sum stalls at 2^24; the f64 partial sums do not
        let n = 1usize << 28;
        let x = Tensor::F32(ArrayD::from_elem(IxDyn(&[n]), 1f32));
        let y = reduce_tensor(&x, &[true], false, Red::Sum).unwrap();
        assert_eq!(y, Tensor::scalar(268435456f32));
        let m = reduce_tensor(&x, &[true], false, Red::Mean).unwrap();
        assert_eq!(m, Tensor::scalar(1f32));
    }

    #[test]
    fn leading_and_strided_axes_reduce_in_place() {
        let a =
            ArrayD::from_shape_vec(IxDyn(&[2, 3, 2]), (0..12).map(|v| v as f32).collect()).unwrap();
        let x = Tensor::F32(a.clone());
        // over the first axis: groups are strided
        let y = reduce_tensor(&x, &[true, false, false], false, Red::Sum).unwrap();
        assert_eq!(
            y,
            Tensor::from_vec(&[3, 2], vec![6f32, 8., 10., 12., 14., 16.]).unwrap()
        );
        // a transposed (non-standard) input, max over its last axis
        let t = Tensor::F32(a.permuted_axes(IxDyn(&[2, 1, 0])));
        let y = reduce_tensor(&t, &[false, false, true], true, Red::Max).unwrap();
        assert_eq!(
            y,
            Tensor::from_vec(&[2, 3, 1], vec![6f32, 8., 10., 7., 9., 11.]).unwrap()
        );
        let y = reduce_tensor(&t, &[true, true, true], false, Red::SumSquare).unwrap();
        assert_eq!(
            y,
            Tensor::scalar((0..12).map(|v| (v * v) as f32).sum::<f32>())
        );
    }

    #[test]
    fn empty_set_identities() {
        let x = Tensor::from_vec::<f32>(&[2, 0], vec![]).unwrap();
        let s = reduce_tensor(&x, &[false, true], true, Red::Prod).unwrap();
        assert_eq!(s, Tensor::from_vec(&[2, 1], vec![1f32, 1.]).unwrap());
        let i = Tensor::from_vec::<i32>(&[0], vec![]).unwrap();
        let m = reduce_tensor(&i, &[true], false, Red::Max).unwrap();
        assert_eq!(m, Tensor::scalar(i32::MIN));
    }

    #[test]
    fn int_mean_truncates_and_sum_wraps() {
        let x = Tensor::from_vec(&[3], vec![1i8, 2, 4]).unwrap();
        assert_eq!(
            reduce_tensor(&x, &[true], false, Red::Mean).unwrap(),
            Tensor::scalar(2i8)
        );
        let y = Tensor::from_vec(&[2], vec![100i8, 100]).unwrap();
        assert_eq!(
            reduce_tensor(&y, &[true], false, Red::Sum).unwrap(),
            Tensor::scalar(-56i8)
        );
    }
}
