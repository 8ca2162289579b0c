//! `Slice`: the elements from `starts` to `ends` by `steps` on `axes`
//! (inputs; the attributes of opsets before 10 are moved to inputs by
//! `graph::upgrade`), clamped as ONNX says.

use super::symbolic_dims::int_dim;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{ints_in, norm_axes, opt_ints_in, out1};
use crate::ops::shape_rules::norm_axis;
use crate::ops::slice_indices::slice_indices;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::Tensor;
use crate::value_type::Dim;
use crate::{bail, map_array};
use ndarray::Slice;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let args = Some((
        cx.ints(1),
        cx.ints(2),
        if cx.has_input(3) {
            cx.ints(3).map(Some).ok_or(())
        } else {
            Ok(None)
        },
        if cx.has_input(4) {
            cx.ints(4).map(Some).ok_or(())
        } else {
            Ok(None)
        },
    ));
    let Some((Some(starts), Some(ends), Ok(axes), Ok(steps))) = args else {
        // the sliced sizes depend on data
        let dims = (0..r).map(|_| Some(cx.fresh())).collect();
        cx.set_tensor(0, elem, Some(dims));
        return Ok(());
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(ShapeError::new(
            "starts, ends, axes and steps must have the same length",
        ));
    }
    let mut out = shape.clone();
    for k in 0..starts.len() {
        let a = norm_axis(axes[k], r)?;
        out[a] = slice_len(&shape[a], starts[k], ends[k], steps[k]);
    }
    // data propagation of 1-D vectors
    if r == 1 && starts.len() == 1 {
        if let Some(v) = cx.value(0).cloned() {
            let idx = crate::ops::slice_indices::slice_indices(
                v.values.len(),
                starts[0],
                ends[0],
                steps[0],
            )
            .map_err(ShapeError::from)?;
            let vals: Vec<Expr> = idx.into_iter().map(|i| v.values[i].clone()).collect();
            cx.set_value(0, SymValue::vector(vals));
        }
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let (starts, ends, axes, steps) = (
            ints_in(ins, 1)?,
            ints_in(ins, 2)?,
            opt_ints_in(ins, 3)?,
            opt_ints_in(ins, 4)?,
        );
        let r = x.rank();
        let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
        let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
        if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
            bail!("starts, ends, axes and steps must have the same length");
        }
        let ax = norm_axes(&axes, r)?;
        let mut lists: Vec<Vec<usize>> = x.shape().iter().map(|&d| (0..d).collect()).collect();
        for (k, &a) in ax.iter().enumerate() {
            lists[a] = slice_indices(x.shape()[a], starts[k], ends[k], steps[k])?;
        }
        out1(take_progressions(x, &lists))
    }))
}

/// The elements at each axis's index list, an arithmetic progression (as
/// `slice_indices` makes them): a strided view copied once (a gather by
/// flat positions built a position per element: 1.23 ms for half of a
/// 1x1024x256 tensor, 33x onnxruntime).
fn take_progressions(x: &Tensor, lists: &[Vec<usize>]) -> Tensor {
    let spans: Vec<Slice> = lists
        .iter()
        .map(|l| match (l.first(), l.last()) {
            (Some(&f), Some(&b)) => {
                let step = l.get(1).map_or(1, |&n| n as isize - f as isize);
                if step > 0 {
                    Slice::new(f as isize, Some(b as isize + 1), step)
                } else {
                    // ndarray walks a negative step from the range's end
                    Slice::new(b as isize, Some(f as isize + 1), step)
                }
            }
            _ => Slice::new(0, Some(0), 1),
        })
        .collect();
    map_array!(x, a => a
        .slice_each_axis(|d| spans[d.axis.index()])
        .as_standard_layout()
        .into_owned())
}

/// Symbolic slice length of a dimension for constant start/end/step.
fn slice_len(d: &Dim, start: i64, end: i64, step: i64) -> Dim {
    if step == 0 {
        return None;
    }
    if let Some(n) = d.as_ref().and_then(|e| e.as_int()) {
        let mut s = if start < 0 {
            start.saturating_add(n)
        } else {
            start
        };
        let mut e = if end < 0 { end.saturating_add(n) } else { end };
        let len = if step > 0 {
            s = s.clamp(0, n);
            e = e.clamp(0, n);
            if e > s {
                (e - s + step - 1) / step
            } else {
                0
            }
        } else {
            s = s.clamp(0, (n - 1).max(0));
            e = e.clamp(-1, n - 1);
            if s > e && n > 0 {
                (s - e + (-step) - 1) / (-step)
            } else {
                0
            }
        };
        return int_dim(len);
    }
    // a symbolic dimension: ONNX's clamping written with Min/Max, so the
    // length is exact for every size of the symbol. Starts and ends past
    // 2^31-1 (INT_MAX, INT64_MAX: "to the end") are taken as beyond any
    // dimension.
    let d = d.as_ref()?;
    const BIG: i64 = i32::MAX as i64;
    let int = Expr::int;
    let zero = int(0);
    if step > 0 {
        let s = if start >= 0 {
            // a start past the end gives a non-positive difference below
            int(start.min(BIG))
        } else if start <= -BIG {
            zero.clone()
        } else {
            Expr::max(&d.add(&int(start)), &zero)
        };
        let e = if end >= BIG {
            d.clone()
        } else if end >= 0 {
            Expr::min(&int(end), d)
        } else if end <= -BIG {
            zero.clone()
        } else {
            // no clamp at 0 needed: below it, e - s is negative anyway
            d.add(&int(end))
        };
        let len = e.sub(&s).add(&int(step - 1)).floor_div(&int(step));
        return Some(Expr::max(&len, &zero));
    }
    let k = step.checked_neg()?;
    let last = d.sub(&int(1));
    let s = if start >= BIG {
        last.clone()
    } else if start >= 0 {
        Expr::min(&int(start), &last)
    } else if start <= -BIG {
        zero.clone()
    } else if start == -1 {
        // d-1 is below 0 only for an empty dimension, which stays empty
        last.clone()
    } else {
        Expr::max(&d.add(&int(start)), &zero)
    };
    let e = if end <= -BIG {
        int(-1)
    } else if end < 0 {
        Expr::max(&d.add(&int(end)), &int(-1))
    } else if end >= BIG {
        last.clone()
    } else {
        Expr::min(&int(end), &last)
    };
    let len = s.sub(&e).add(&int(k - 1)).floor_div(&int(k));
    // never more than the dimension (an empty one stays empty)
    Some(Expr::max(&Expr::min(&len, d), &zero))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    #[test]
    fn progressions_agree_with_the_gather_by_position() {
        let x = Tensor::from_vec(&[4, 5, 6], (0..120).map(|v| v as f32).collect()).unwrap();
        for (a, b, c) in [
            ((1, 3, 1), (0, 5, 2), (5, -1, -1)),
            ((3, -1, -2), (4, 0, -3), (0, 6, 4)),
            ((0, 4, 1), (2, 2, 1), (1, 2, 1)),
        ] {
            let lists: Vec<Vec<usize>> = [(a, 4), (b, 5), (c, 6)]
                .iter()
                .map(|&((s, e, st), d)| slice_indices(d, s, e, st).unwrap())
                .collect();
            let want = crate::ops::kernels::manip::gather_axes(&x, &lists).unwrap();
            let got = take_progressions(&x, &lists);
            assert_eq!(got.shape(), want.shape());
            assert_eq!(got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
        }
    }

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn slice_negative_steps_and_clamping() {
        let x = v1(&(0..10).collect::<Vec<_>>());
        let y = run(
            kernel,
            13,
            vec![],
            vec![x.clone(), v1(&[-1]), v1(&[-100]), None, v1(&[-3])],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[4], vec![9, 6, 3, 0]));
        let y = run(
            kernel,
            13,
            vec![],
            vec![x.clone(), v1(&[20]), v1(&[-20]), v1(&[0]), v1(&[-4])],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[3], vec![9, 5, 1]));
        let y = run(
            kernel,
            13,
            vec![],
            vec![x.clone(), v1(&[3]), v1(&[i64::MAX])],
            1,
        )
        .unwrap();
        assert_eq!(y[0].len(), 7);
        assert!(run(
            kernel,
            13,
            vec![],
            vec![x, v1(&[0]), v1(&[1]), v1(&[0]), v1(&[0])],
            1
        )
        .is_err());
    }

    /// The symbolic kernel length equals the constant one for every size,
    /// start, end and step in a grid (ends and starts past 2^31-1 included).
    #[test]
    fn symbolic_slice_lengths_are_exact() {
        let big = [i64::MAX, i32::MAX as i64, -(i32::MAX as i64), i64::MIN + 1];
        let mut bounds: Vec<i64> = (-7..=7).collect();
        bounds.extend(big);
        let n = Expr::sym("n");
        for step in [-3, -2, -1, 1, 2, 3] {
            for &start in &bounds {
                for &end in &bounds {
                    let sym = super::slice_len(&Some(n.clone()), start, end, step)
                        .expect("a symbolic length");
                    for d in 0..=9i64 {
                        let want = super::slice_len(&Some(Expr::int(d)), start, end, step)
                            .and_then(|e| e.as_int())
                            .unwrap();
                        let b: crate::expr::Bindings = [("n".to_string(), d)].into_iter().collect();
                        assert_eq!(
                            sym.eval(&b).unwrap(),
                            want,
                            "n={d} start={start} end={end} step={step}: {sym}"
                        );
                    }
                }
            }
        }
    }
}
