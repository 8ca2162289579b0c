//! Add, Sub, Mul and Div: numpy broadcasting, one numeric type for both
//! operands, wrapping integers and an error for an integer division by
//! zero. Their shape rules propagate known values (symbolic dimensions
//! included). One file with a module per operator: they differ in one
//! function.

use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::{typed, zip2};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;
use std::cell::Cell;

/// The four arithmetic operators.
#[derive(Clone, Copy, Debug)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

fn arith_typed<T: Num>(op: Arith, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    let div_zero = Cell::new(false);
    let out = match op {
        Arith::Add => zip2(x, y, |p, q| p.add(q))?,
        Arith::Sub => zip2(x, y, |p, q| p.sub(q))?,
        Arith::Mul => zip2(x, y, |p, q| p.mul(q))?,
        Arith::Div => zip2(x, y, |p, q| {
            p.div(q).unwrap_or_else(|| {
                div_zero.set(true);
                T::zero()
            })
        })?,
    };
    if div_zero.get() {
        bail!("integer division by zero");
    }
    Ok(T::wrap(out))
}

/// `a op b` with numpy broadcasting; both operands of one numeric type.
fn arith(op: Arith, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    if a.dtype() != b.dtype() {
        bail!(
            "operands must have the same element type, got {} and {}",
            a.dtype(),
            b.dtype()
        );
    }
    dispatch_num!(
        a,
        arith_typed(op, a, b),
        bail!("{op:?} does not accept {}", a.dtype())
    )
}

fn arith_kernel(op: Arith) -> Kernel {
    Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        Ok(vec![Value::Tensor(arith(op, a, b)?)])
    })
}

/// Add, Sub or Mul: the broadcast rule propagating known values with
/// `$value`, the shared kernel for its `Arith`.
macro_rules! arithmetic {
    ($module:ident, $op:ident, $value:expr) => {
        pub mod $module {
            use crate::expr::Expr;
            use crate::ops::elementwise::value_rules::{broadcast_inputs, propagate};
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
            use crate::ops::{InferCtx, ShapeError};

            pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
                broadcast_inputs(cx)?;
                propagate(cx, |a: &Expr, b: &Expr| Some($value(a, b)));
                Ok(())
            }

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(super::arith_kernel(super::Arith::$op))
            }
        }
    };
}

arithmetic!(add, Add, Expr::add);
arithmetic!(sub, Sub, Expr::sub);
arithmetic!(mul, Mul, Expr::mul);

pub mod div {
    use crate::expr::Expr;
    use crate::ops::elementwise::value_rules::{broadcast_inputs, propagate};
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
    use crate::ops::{InferCtx, ShapeError};

    pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
        broadcast_inputs(cx)?;
        // integer Div truncates toward zero; floor division agrees for the
        // non-negative sizes that shapes hold
        if cx.elem(0).is_some_and(|e| e.is_float()) {
            // a float quotient stays a value only when it is an integer
            propagate(cx, |a, b| match (a.as_int(), b.as_int()) {
                (_, Some(1)) => Some(a.clone()),
                (Some(x), Some(y)) if y != 0 && x % y == 0 => Some(Expr::int(x / y)),
                _ => None,
            });
        } else {
            propagate(cx, |a, b| (b.as_int() != Some(0)).then(|| a.floor_div(b)));
        }
        Ok(())
    }

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(super::arith_kernel(super::Arith::Div))
    }
}
