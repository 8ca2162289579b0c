//! And, Or, Xor and Not on bool tensors, broadcast together; known truth
//! values propagate. One file with a module per operator: they differ in
//! one function.

use super::value_rules::{broadcast_as, propagate};
use crate::ops::kernel::{tensor_in, Kernel};
use crate::ops::kernels::{typed, zip2};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use ndarray::ArrayD;

/// The broadcast shape with bool elements; `f` of known truth values.
fn logic_shape(cx: &mut InferCtx, f: fn(bool, bool) -> bool) -> Result<(), ShapeError> {
    broadcast_as(cx, DataType::Bool)?;
    propagate(cx, |a, b| {
        Some(super::value_rules::truth(f(
            a.as_int()? != 0,
            b.as_int()? != 0,
        )))
    });
    Ok(())
}

fn logic_kernel(name: &'static str, f: fn(bool, bool) -> bool) -> Kernel {
    Box::new(move |_, ins| {
        let a: &ArrayD<bool> = typed(tensor_in(ins, 0)?, name)?;
        let b: &ArrayD<bool> = typed(tensor_in(ins, 1)?, name)?;
        Ok(vec![Value::Tensor(Tensor::Bool(zip2(a, b, f)?))])
    })
}

/// One binary logical operator: the shared rule and kernel for `$f`.
macro_rules! logical {
    ($module:ident, $name:literal, $f:expr) => {
        pub mod $module {
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
            use crate::ops::{InferCtx, ShapeError};

            pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
                super::logic_shape(cx, $f)
            }

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(super::logic_kernel($name, $f))
            }
        }
    };
}

logical!(and, "And", |p, q| p && q);
logical!(or, "Or", |p, q| p || q);
logical!(xor, "Xor", |p, q| p != q);

pub mod not {
    use crate::expr::Expr;
    use crate::ops::elementwise::value_rules::{propagate_unary, same_as_input, truth};
    use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
    use crate::ops::kernels::typed;
    use crate::ops::{InferCtx, ShapeError};
    use crate::tensor::{Tensor, Value};
    use ndarray::ArrayD;

    pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
        same_as_input(cx)?;
        propagate_unary(cx, |e: &Expr| e.as_int().map(|v| truth(v == 0)));
        Ok(())
    }

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(Box::new(|_, ins| {
            let a: &ArrayD<bool> = typed(tensor_in(ins, 0)?, "Not input")?;
            Ok(vec![Value::Tensor(Tensor::Bool(a.mapv(|v| !v)))])
        }))
    }
}
