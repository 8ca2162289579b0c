//! The unary float functions without attributes (Sqrt, Exp, Log, the
//! trigonometric and hyperbolic functions, Erf, Sigmoid, Tanh, Softplus,
//! Softsign, Mish, Reciprocal and the rounding operators): each is one
//! scalar function over every element, so they are one file with a module
//! per operator. Floor, Ceil and Round keep known integer values.

use crate::ops::elementwise::value_rules::{propagate_unary, same_as_input};
use crate::ops::{InferCtx, ShapeError};

/// The rule of the rounding operators: the input's type and shape, and its
/// known values, which are integers even in a float tensor.
pub fn rounding_shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    propagate_unary(cx, |e| Some(e.clone()));
    Ok(())
}

/// One operator computing the scalar function `$f` (in f64) of every
/// element of its float input, with the rule `$shape`.
macro_rules! float_function {
    ($module:ident, $name:literal, $f:expr) => {
        float_function!(
            $module,
            $name,
            $f,
            crate::ops::elementwise::value_rules::same_as_input
        );
    };
    ($module:ident, $name:literal, $f:expr, $shape:path) => {
        pub mod $module {
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
            pub use $shape as shape;

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(crate::ops::elementwise::float_map::float_kernel($name, $f))
            }
        }
    };
}

float_function!(reciprocal, "Reciprocal", |v| 1.0 / v);
float_function!(floor, "Floor", f64::floor, super::rounding_shape);
float_function!(ceil, "Ceil", f64::ceil, super::rounding_shape);
float_function!(round, "Round", f64::round_ties_even, super::rounding_shape);
float_function!(sqrt, "Sqrt", f64::sqrt);
float_function!(exp, "Exp", f64::exp);
float_function!(log, "Log", f64::ln);
float_function!(sin, "Sin", f64::sin);
float_function!(cos, "Cos", f64::cos);
float_function!(tan, "Tan", f64::tan);
float_function!(asin, "Asin", f64::asin);
float_function!(acos, "Acos", f64::acos);
float_function!(atan, "Atan", f64::atan);
float_function!(sinh, "Sinh", f64::sinh);
float_function!(cosh, "Cosh", f64::cosh);
float_function!(asinh, "Asinh", f64::asinh);
float_function!(acosh, "Acosh", f64::acosh);
float_function!(atanh, "Atanh", f64::atanh);
float_function!(erf, "Erf", crate::ops::kernels::scalar_math::erf);
float_function!(mish, "Mish", |v| v
    * crate::ops::kernels::scalar_math::softplus(v).tanh());
float_function!(
    softplus,
    "Softplus",
    crate::ops::kernels::scalar_math::softplus
);
float_function!(softsign, "Softsign", |v| v / (1.0 + v.abs()));

/// Sigmoid: float32 in float32 (`exp_f32`), the other types through f64.
pub mod sigmoid {
    use crate::ops::elementwise::float_map::float_kernel_f32;
    pub use crate::ops::elementwise::value_rules::same_as_input as shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
    use crate::ops::kernels::{exp_f32, scalar_math};

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(float_kernel_f32(
            "Sigmoid",
            exp_f32::sigmoid,
            scalar_math::sigmoid,
        ))
    }
}

/// Tanh: float32 in float32 (`exp_f32`), the other types through f64.
pub mod tanh {
    use crate::ops::elementwise::float_map::float_kernel_f32;
    pub use crate::ops::elementwise::value_rules::same_as_input as shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
    use crate::ops::kernels::exp_f32;

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(float_kernel_f32("Tanh", exp_f32::tanh, f64::tanh))
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn float_functions_refuse_integers_and_round_to_even() {
        assert!(run("Sqrt", vec![], 13, &[Some(t(&[1], vec![4i32]))]).is_err());
        let r = run(
            "Round",
            vec![],
            11,
            &[Some(t(&[4], vec![0.5f32, 1.5, 2.5, -2.5]))],
        )
        .unwrap();
        assert_eq!(r.to_f64_vec().unwrap(), vec![0.0, 2.0, 2.0, -2.0]);
    }
}
