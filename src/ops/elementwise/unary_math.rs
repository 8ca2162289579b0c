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
/// element of its float input, with the rule `$shape`; with `f32: $g`, a
/// contiguous float32 input is computed by `$g` in float32 instead, in one
/// vectorised loop (through f64 a float32 Exp of 1x1024x256 took 1.42 ms,
/// 12x onnxruntime). The `$g` given are exact (the f64 result rounded to
/// float32 is the same) except Exp, `exp_f32` (under 3 ulps), and Softsign
/// (its sum rounds to float32 before the division).
macro_rules! float_function {
    ($module:ident, $name:literal, $f:expr $(, f32: $g:expr)?) => {
        float_function!(
            $module,
            $name,
            $f,
            crate::ops::elementwise::value_rules::same_as_input
            $(, f32: $g)?
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
    ($module:ident, $name:literal, $f:expr, $shape:path, f32: $g:expr) => {
        pub mod $module {
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
            pub use $shape as shape;

            crate::ops::elementwise::float_map::f32_slice_map!(fn map_f32 = $g);

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(crate::ops::elementwise::float_map::float_kernel_f32_slices(
                    $name, map_f32, $f,
                ))
            }
        }
    };
}

float_function!(reciprocal, "Reciprocal", |v| 1.0 / v, f32: |v: f32| 1.0 / v);
float_function!(floor, "Floor", f64::floor, super::rounding_shape, f32: f32::floor);
float_function!(ceil, "Ceil", f64::ceil, super::rounding_shape, f32: f32::ceil);
float_function!(
    round,
    "Round",
    f64::round_ties_even,
    super::rounding_shape,
    f32: f32::round_ties_even
);
float_function!(sqrt, "Sqrt", f64::sqrt, f32: f32::sqrt);
float_function!(exp, "Exp", f64::exp, f32: crate::ops::kernels::exp_f32::exp);
float_function!(log, "Log", f64::ln, f32: crate::ops::kernels::exp_f32::ln);
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
float_function!(
    erf,
    "Erf",
    crate::ops::kernels::scalar_math::erf,
    f32: crate::ops::kernels::exp_f32::erf
);
float_function!(mish, "Mish", |v| v
    * crate::ops::kernels::scalar_math::softplus(v).tanh());
float_function!(
    softplus,
    "Softplus",
    crate::ops::kernels::scalar_math::softplus
);
float_function!(softsign, "Softsign", |v| v / (1.0 + v.abs()), f32: |v: f32| v / (1.0 + v.abs()));

/// Sigmoid: float32 in float32 (`exp_f32`), the other types through f64.
pub mod sigmoid {
    use crate::ops::elementwise::float_map::{f32_slice_map, float_kernel_f32_slices};
    pub use crate::ops::elementwise::value_rules::same_as_input as shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
    use crate::ops::kernels::{exp_f32, scalar_math};

    f32_slice_map!(fn map_f32 = exp_f32::sigmoid);

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(float_kernel_f32_slices(
            "Sigmoid",
            map_f32,
            scalar_math::sigmoid,
        ))
    }
}

/// Tanh: float32 in float32 (`exp_f32`), the other types through f64.
pub mod tanh {
    use crate::ops::elementwise::float_map::{f32_slice_map, float_kernel_f32_slices};
    pub use crate::ops::elementwise::value_rules::same_as_input as shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
    use crate::ops::kernels::exp_f32;

    f32_slice_map!(fn map_f32 = exp_f32::tanh);

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(float_kernel_f32_slices("Tanh", map_f32, f64::tanh))
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

    #[test]
    fn float32_paths_agree_with_float64() {
        // ties, signed zeros, infinities, NaN, subnormals, large values
        let x: Vec<f32> = vec![
            0.5,
            1.5,
            -2.5,
            2.4999998,
            -0.0,
            0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            -1e-40,
            3.0e38,
            -7.3,
            0.1,
            88.0,
            -100.0,
            16_777_215.0,
        ];
        type F = fn(f64) -> f64;
        let cases: [(&str, F, f64); 7] = [
            ("Floor", f64::floor, 0.0),
            ("Ceil", f64::ceil, 0.0),
            ("Round", f64::round_ties_even, 0.0),
            ("Sqrt", f64::sqrt, 0.0),
            ("Reciprocal", |v| 1.0 / v, 0.0),
            ("Softsign", |v| v / (1.0 + v.abs()), 1.2e-7),
            ("Exp", f64::exp, 3.6e-7),
        ];
        for (op, f, rel) in cases {
            let got = run(op, vec![], 13, &[Some(t(&[x.len()], x.clone()))]).unwrap();
            let got = got.to_f64_vec().unwrap();
            for (&v, &g) in x.iter().zip(&got) {
                let want = f(v as f64) as f32 as f64;
                let ok = if want.is_nan() {
                    g.is_nan()
                } else if rel == 0.0 || !want.is_finite() || want == 0.0 {
                    g == want && g.is_sign_negative() == want.is_sign_negative()
                } else {
                    ((g - want) / want).abs() <= rel
                };
                assert!(ok, "{op}({v:e}) = {g:e}, want {want:e}");
            }
        }
    }
}
