//! Equal, Less, LessOrEqual, Greater and GreaterOrEqual: bool results of
//! operands of one type, broadcast together; known values compare when
//! their difference simplifies to a constant. One file with a module per
//! operator: they differ in one comparison.

use super::value_rules::{broadcast_as, propagate, truth};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError};
use crate::ops::kernels::numeric::same_pair;
use crate::ops::kernels::zip2;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Comparison of two known values: constants, or expressions whose
/// difference simplifies to a constant.
fn compare_values(a: &Expr, b: &Expr, op: Cmp) -> Option<Expr> {
    let d = a.sub(b).as_int()?;
    let r = match op {
        Cmp::Eq => d == 0,
        Cmp::Lt => d < 0,
        Cmp::Le => d <= 0,
        Cmp::Gt => d > 0,
        Cmp::Ge => d >= 0,
    };
    Some(truth(r))
}

/// The broadcast shape with bool elements, and known values compared.
fn comparison_shape(cx: &mut InferCtx, op: Cmp) -> Result<(), ShapeError> {
    broadcast_as(cx, DataType::Bool)?;
    propagate(cx, |a, b| compare_values(a, b, op));
    Ok(())
}

// the bool arms of `same_pair!` compare booleans; only Equal reaches them
#[allow(clippy::bool_comparison)]
fn compare(op: Cmp, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    if op != Cmp::Eq && matches!(a.dtype(), DataType::String | DataType::Bool) {
        bail!("{op:?} does not accept {}", a.dtype());
    }
    let out = same_pair!(a, b, x, y => match op {
        Cmp::Eq => zip2(x, y, |p, q| p == q)?,
        Cmp::Lt => zip2(x, y, |p, q| p < q)?,
        Cmp::Le => zip2(x, y, |p, q| p <= q)?,
        Cmp::Gt => zip2(x, y, |p, q| p > q)?,
        Cmp::Ge => zip2(x, y, |p, q| p >= q)?,
    }, bail!("{op:?}: operands must have the same supported type, got {} and {}", a.dtype(), b.dtype()));
    Ok(Tensor::Bool(out))
}

fn cmp_kernel(op: Cmp) -> Kernel {
    Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        Ok(vec![Value::Tensor(compare(op, a, b)?)])
    })
}

/// One comparison operator: the shared rule and kernel for its `Cmp`.
macro_rules! comparison {
    ($module:ident, $op:ident) => {
        pub mod $module {
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
            use crate::ops::{InferCtx, ShapeError};

            pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
                super::comparison_shape(cx, super::Cmp::$op)
            }

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(super::cmp_kernel(super::Cmp::$op))
            }
        }
    };
}

comparison!(equal, Eq);
comparison!(less, Lt);
comparison!(less_or_equal, Le);
comparison!(greater, Gt);
comparison!(greater_or_equal, Ge);

#[cfg(test)]
mod tests {
    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn comparisons_broadcast_and_need_one_type() {
        let x = t(&[2, 1], vec![1i64, 2]);
        let y = t(&[], vec![0i64]);
        let g = run("Greater", vec![], 13, &[Some(x), Some(y)]).unwrap();
        assert_eq!(g.dtype(), crate::tensor::DataType::Bool);
        assert_eq!(g.shape(), &[2, 1]);
        let bad = run(
            "Less",
            vec![],
            13,
            &[Some(t(&[1], vec![1i32])), Some(t(&[1], vec![1i64]))],
        );
        assert!(bad.is_err());
    }
}
