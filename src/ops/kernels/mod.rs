//! The compute several operator families (or the plan's passes) share, one
//! file per building block (the GEMM and conv engines, the sliding window,
//! numeric traits, f32/f64 helpers), and here the smallest helpers (numpy
//! broadcasting, axis normalisation, typed access, the size check).

pub mod axis_slices;
pub mod conv;
pub mod conv_depthwise;
pub mod conv_epilogue;
pub mod conv_f32;
pub mod conv_single_position;
pub mod exp_f32;
pub mod f64_values;
pub mod manip;
pub mod matrix_product;
pub mod numeric;
pub mod rows_f32;
pub mod scalar_math;
pub mod sliding_window;
pub mod threads;
pub mod vector_unit;

use super::kernel::KernelError;
use crate::tensor::Elem;
use ndarray::{ArrayD, IxDyn, Zip};

/// The numpy broadcast of two shapes.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>, KernelError> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(KernelError::new(format!(
                "shapes {a:?} and {b:?} cannot be broadcast (axis {i}: {da} vs {db})"
            )));
        };
    }
    // the result is about to be allocated: the memory budget decides
    crate::tensor::budget::check(&out, 8)?;
    Ok(out)
}

/// The numpy broadcast of several shapes.
pub fn broadcast_all(shapes: &[&[usize]]) -> Result<Vec<usize>, KernelError> {
    let mut out: Vec<usize> = vec![];
    for s in shapes {
        out = broadcast_shapes(&out, s)?;
    }
    Ok(out)
}

/// Applies `f` elementwise over two broadcast arrays (of any memory order).
pub fn zip2<A: Clone, B: Clone, O>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    f: impl Fn(A, B) -> O,
) -> Result<ArrayD<O>, KernelError> {
    if b.len() == 1 && b.ndim() <= a.ndim() {
        let y = b.iter().next().cloned().expect("one element");
        let shape = broadcast_shapes(a.shape(), b.shape())?;
        if a.shape() == shape.as_slice() {
            return Ok(a.mapv(|x| f(x, y.clone())));
        }
        // the scalar adds leading axes: build row-major in logical order
        // (`a` may be column-major, as a Concat along an inner axis leaves it)
        let v: Vec<O> = a.iter().map(|x| f(x.clone(), y.clone())).collect();
        return Ok(ArrayD::from_shape_vec(IxDyn(&shape), v)?);
    }
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    if let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        if let Some(v) = zip2_runs(sa, a.shape(), sb, b.shape(), &shape, &f) {
            return Ok(ArrayD::from_shape_vec(IxDyn(&shape), v)?);
        }
    }
    let av = a
        .broadcast(IxDyn(&shape))
        .ok_or_else(|| KernelError::new("broadcast failed"))?;
    let bv = b
        .broadcast(IxDyn(&shape))
        .ok_or_else(|| KernelError::new("broadcast failed"))?;
    Ok(Zip::from(&av)
        .and(&bv)
        .map_collect(|x, y| f(x.clone(), y.clone())))
}

/// Shortest innermost run for which [`zip2_runs`] beats ndarray's `Zip`.
const MIN_RUN: usize = 16;

/// The broadcast `f(a, b)` of two row-major operands as runs along the
/// output's innermost axes: the axes where both operands are contiguous
/// (or both broadcast) are merged, so that each run reads a slice or
/// repeats one element of each operand, a loop the compiler vectorises
/// (`x + bias` per channel: runs of one channel's plane with the bias as a
/// scalar). `None` when the output is empty, or when it takes several runs
/// shorter than [`MIN_RUN`].
fn zip2_runs<A: Clone, B: Clone, O>(
    a: &[A],
    a_shape: &[usize],
    b: &[B],
    b_shape: &[usize],
    out: &[usize],
    f: &impl Fn(A, B) -> O,
) -> Option<Vec<O>> {
    // each operand's strides over the output's axes (0 where it broadcasts)
    let strides = |shape: &[usize]| {
        let pad = out.len() - shape.len();
        let mut st = vec![0usize; out.len()];
        let mut step = 1;
        for (i, &d) in shape.iter().enumerate().rev() {
            st[pad + i] = if d == 1 { 0 } else { step };
            step *= d;
        }
        st
    };
    let (sa, sb) = (strides(a_shape), strides(b_shape));
    // (length, stride in a, stride in b), innermost first, merged
    let mut dims: Vec<(usize, usize, usize)> = Vec::with_capacity(out.len());
    for i in (0..out.len()).rev() {
        if out[i] == 1 {
            continue;
        }
        match dims.last_mut() {
            Some((n, ia, ib)) if sa[i] == *ia * *n && sb[i] == *ib * *n => *n *= out[i],
            _ => dims.push((out[i], sa[i], sb[i])),
        }
    }
    let total: usize = out.iter().product();
    let (run, ia, ib) = dims.first().copied().unwrap_or((1, 0, 0));
    // one run (equal shapes, or a broadcast that merges away) is one loop
    // at any length
    if total == 0 || (run < MIN_RUN && dims.len() > 1) {
        return None;
    }
    // no axes at all when every output axis has length 1
    let outer = dims.get(1..).unwrap_or(&[]);
    let mut v = Vec::with_capacity(total);
    let mut index = vec![0usize; outer.len()];
    let (mut oa, mut ob) = (0usize, 0usize);
    for _ in 0..total / run {
        match (ia, ib) {
            (1, 1) => v.extend(
                a[oa..oa + run]
                    .iter()
                    .zip(&b[ob..ob + run])
                    .map(|(x, y)| f(x.clone(), y.clone())),
            ),
            (1, _) => {
                let y = &b[ob];
                v.extend(a[oa..oa + run].iter().map(|x| f(x.clone(), y.clone())));
            }
            (_, 1) => {
                let x = &a[oa];
                v.extend(b[ob..ob + run].iter().map(|y| f(x.clone(), y.clone())));
            }
            _ => {
                let (x, y) = (&a[oa], &b[ob]);
                v.extend((0..run).map(|_| f(x.clone(), y.clone())));
            }
        }
        // the next run: the outer index advanced like an odometer
        for (k, &(n, da, db)) in outer.iter().enumerate() {
            index[k] += 1;
            oa += da;
            ob += db;
            if index[k] < n {
                break;
            }
            index[k] = 0;
            oa -= da * n;
            ob -= db * n;
        }
    }
    Some(v)
}

/// Applies `f` elementwise over three broadcast arrays.
pub fn zip3<A: Clone, B: Clone, C: Clone, O>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    c: &ArrayD<C>,
    f: impl Fn(A, B, C) -> O,
) -> Result<ArrayD<O>, KernelError> {
    let shape = broadcast_all(&[a.shape(), b.shape(), c.shape()])?;
    let sh = IxDyn(&shape);
    let err = || KernelError::new("broadcast failed");
    let av = a.broadcast(sh.clone()).ok_or_else(err)?;
    let bv = b.broadcast(sh.clone()).ok_or_else(err)?;
    let cv = c.broadcast(sh).ok_or_else(err)?;
    Ok(Zip::from(&av)
        .and(&bv)
        .and(&cv)
        .map_collect(|x, y, z| f(x.clone(), y.clone(), z.clone())))
}

/// Normalises a possibly negative axis against a rank.
pub fn norm_axis(axis: i64, rank: usize) -> Result<usize, KernelError> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(KernelError::new(format!(
            "axis {axis} is out of range for rank {rank}"
        )));
    }
    Ok(a as usize)
}

/// A flat vector with a shape as an ndarray.
pub fn array<T>(shape: &[usize], v: Vec<T>) -> Result<ArrayD<T>, KernelError> {
    Ok(ArrayD::from_shape_vec(IxDyn(shape), v)?)
}

/// The array of a tensor of type `T`, or a type error.
pub fn typed<'a, T: Elem>(
    t: &'a crate::tensor::Tensor,
    what: &str,
) -> Result<&'a ArrayD<T>, KernelError> {
    T::view(t)
        .ok_or_else(|| KernelError::new(format!("{what} must be {}, got {}", T::DTYPE, t.dtype())))
}

/// The element count of a shape the kernel is about to allocate, checked
/// against the memory budget (8 bytes per element: kernels may compute in
/// f64).
pub fn checked_size(dims: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(dims, 8)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_runs_match_ndarray_for_every_pattern() {
        // per channel, bias row, column, scalar-like, both sides broadcast,
        // runs too short for the fast path, size-1 and empty axes
        let cases: &[(&[usize], &[usize])] = &[
            (&[1, 64, 7, 9], &[1, 64, 1, 1]),
            (&[2, 5, 32], &[32]),
            (&[3, 1, 40], &[1, 4, 40]),
            (&[40, 1], &[1, 40]),
            (&[6, 1, 1, 17], &[6, 3, 2, 1]),
            (&[1, 20], &[20, 20]),
            (&[2, 3, 4], &[3, 1]),
            (&[5, 0, 20], &[20]),
            (&[1, 1, 33], &[2, 1, 1]),
            (&[1], &[1, 1]),
            (&[3, 5], &[3, 5]),
        ];
        for (sa, sb) in cases {
            let fill = |shape: &[usize], k: f32| {
                let n: usize = shape.iter().product();
                ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|i| i as f32 * k - 3.0).collect())
                    .unwrap()
            };
            let (a, b) = (fill(sa, 0.5), fill(sb, -1.25));
            let got = zip2(&a, &b, |x, y| x * 3.0 + y).unwrap();
            let shape = broadcast_shapes(sa, sb).unwrap();
            let want = Zip::from(&a.broadcast(IxDyn(&shape)).unwrap())
                .and(&b.broadcast(IxDyn(&shape)).unwrap())
                .map_collect(|&x, &y| x * 3.0 + y);
            assert_eq!(got, want, "{sa:?} with {sb:?}");
            // the other operand order too
            let got = zip2(&b, &a, |x, y| x - y).unwrap();
            let want = Zip::from(&b.broadcast(IxDyn(&shape)).unwrap())
                .and(&a.broadcast(IxDyn(&shape)).unwrap())
                .map_collect(|&x, &y| x - y);
            assert_eq!(got, want, "{sb:?} with {sa:?}");
        }
    }

    #[test]
    fn zip2_takes_column_major_arrays_with_a_scalar_of_lower_rank() {
        // [2, 3] in column-major order, as a Concat along axis 1 can leave it
        let a = ArrayD::from_shape_vec(IxDyn(&[3, 2]), vec![1f32, 2., 3., 4., 5., 6.])
            .unwrap()
            .reversed_axes();
        assert!(!a.is_standard_layout());
        let one = ArrayD::from_elem(IxDyn(&[]), 1f32);
        let y = zip2(&a, &one, |x, y| x + y).unwrap();
        assert_eq!(y, a.mapv(|x| x + 1.0));
        let one = ArrayD::from_elem(IxDyn(&[1, 1, 1]), 1f32);
        let y = zip2(&a, &one, |x, y| x + y).unwrap();
        assert_eq!(y.shape(), &[1, 2, 3]);
        assert_eq!(
            y.iter().copied().collect::<Vec<_>>(),
            vec![2., 4., 6., 3., 5., 7.]
        );
    }
}
