//! Min, Max, Sum and Mean over any number of inputs, broadcast together
//! (NaN wins in Min and Max); known integer values of Min, Max and Sum
//! propagate. One file with a module per operator: they differ in one fold.

use super::value_rules::{broadcast_inputs, propagate_all};
use crate::bail;
use crate::dispatch_num;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::{typed, zip2};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

/// The broadcast shape; known integer values fold with `f`, when given.
fn variadic_shape(
    cx: &mut InferCtx,
    f: Option<fn(&Expr, &Expr) -> Expr>,
) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    if let Some(f) = f.filter(|_| cx.elem(0).is_some_and(|e| e.is_int())) {
        propagate_all(cx, |a| {
            Some(a.iter().skip(1).fold(a[0].clone(), |m, x| f(&m, x)))
        });
    }
    Ok(())
}

/// The larger of two values; NaN wins (numpy semantics).
#[allow(clippy::eq_op)]
fn max_of<T: Num>(a: T, b: T) -> T {
    if a != a {
        a
    } else if b != b || b > a {
        b
    } else {
        a
    }
}

/// The smaller of two values; NaN wins.
#[allow(clippy::eq_op)]
fn min_of<T: Num>(a: T, b: T) -> T {
    if a != a {
        a
    } else if b != b || b < a {
        b
    } else {
        a
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fold {
    Min,
    Max,
    Sum,
    Mean,
}

fn fold_t<T: Num>(op: Fold, ts: &[&Tensor]) -> Result<Tensor, KernelError> {
    let mut acc: ArrayD<T> = typed::<T>(ts[0], "input 0")?.clone();
    for (i, t) in ts.iter().enumerate().skip(1) {
        let x: &ArrayD<T> = typed(t, &format!("input {i}"))?;
        acc = match op {
            Fold::Min => zip2(&acc, x, min_of)?,
            Fold::Max => zip2(&acc, x, max_of)?,
            Fold::Sum | Fold::Mean => zip2(&acc, x, |p, q| p.add(q))?,
        };
    }
    if op == Fold::Mean {
        let n = T::from_f64(ts.len() as f64);
        acc.mapv_inplace(|v| v.div(n).unwrap_or(v));
    }
    Ok(T::wrap(acc))
}

fn fold_kernel(op: Fold) -> Kernel {
    Box::new(move |_, ins| {
        let mut ts = Vec::with_capacity(ins.len());
        for i in 0..ins.len() {
            ts.push(tensor_in(ins, i)?);
        }
        if ts.is_empty() {
            bail!("{op:?} needs at least one input");
        }
        let first = ts[0];
        // the common case: float32 operands of one shape, summed in place
        if matches!(op, Fold::Sum) && ts.len() > 1 {
            if let Tensor::F32(a0) = first {
                let same = ts
                    .iter()
                    .all(|t| matches!(t, Tensor::F32(a) if a.shape() == a0.shape()));
                if same {
                    let mut acc = a0.as_standard_layout().into_owned();
                    for t in &ts[1..] {
                        if let Tensor::F32(a) = t {
                            acc += a;
                        }
                    }
                    return Ok(vec![Value::Tensor(Tensor::F32(acc))]);
                }
            }
        }
        if matches!(op, Fold::Sum | Fold::Mean) && !first.dtype().is_float() {
            bail!(
                "{op:?} does not accept {} (float types only)",
                first.dtype()
            );
        }
        let y = dispatch_num!(
            first,
            fold_t(op, &ts),
            bail!("{op:?} does not accept {}", first.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    })
}

/// One variadic operator: the shared rule folding known values with
/// `$value` and the shared kernel for its `Fold`.
macro_rules! variadic {
    ($module:ident, $op:ident, $value:expr) => {
        pub mod $module {
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
            use crate::ops::{InferCtx, ShapeError};

            pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
                super::variadic_shape(cx, $value)
            }

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(super::fold_kernel(super::Fold::$op))
            }
        }
    };
}

variadic!(min, Min, Some(crate::expr::Expr::min));
variadic!(max, Max, Some(crate::expr::Expr::max));
variadic!(sum, Sum, Some(crate::expr::Expr::add));
variadic!(mean, Mean, None);

#[cfg(test)]
mod tests {

    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn max_propagates_nan_and_broadcasts() {
        let a = t(&[2, 1], vec![f32::NAN, 1.0]);
        let b = t(&[2], vec![0.0f32, 5.0]);
        let m = run("Max", vec![], 13, &[Some(a), Some(b)]).unwrap();
        assert_eq!(m.shape(), &[2, 2]);
        let v = m.to_f64_vec().unwrap();
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[1.0, 5.0]);
    }
}
