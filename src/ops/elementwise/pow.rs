//! Pow: a numeric base raised to a numeric exponent of any type, exact
//! (wrapping) for integer bases and exponents.

use crate::bail;
use crate::dispatch_num;
use crate::ops::elementwise::float_map::map_f32_slice;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::{array, typed, zip2};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

pub use super::value_rules::broadcast_inputs as shape;

/// A numeric tensor's values as an f64 array of the same shape.
fn as_f64_array(t: &Tensor, what: &str) -> Result<ArrayD<f64>, KernelError> {
    match t.to_f64_vec() {
        Some(v) => array(t.shape(), v),
        None => bail!("{what} must be numeric, got {}", t.dtype()),
    }
}

/// Integer power by squaring, wrapping; `None` for a negative exponent.
fn int_pow<T: Num>(base: T, mut e: i128) -> Option<T> {
    if e < 0 {
        return None;
    }
    let mut acc = T::one();
    let mut b = base;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.mul(b);
        }
        e >>= 1;
        if e > 0 {
            b = b.mul(b);
        }
    }
    Some(acc)
}

fn pow_t<T: Num>(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "X")?;
    let exp_int = b.dtype().is_int();
    let y = as_f64_array(b, "Y")?;
    let out = zip2(x, &y, |p, q| {
        if !T::IS_FLOAT && exp_int {
            if let Some(v) = int_pow(p, q as i128) {
                return v;
            }
        }
        T::from_f64(p.to_f64().powf(q))
    })?;
    Ok(T::wrap(out))
}

/// A float32 base raised to one exponent (a tensor of one element): the
/// exponents real models use (2 and 3 in LayerNorm and Gelu
/// decompositions, 0.5) by multiplication or square root, giving the
/// float32 the float64 `powf` rounds to; other exponents by `powf` per
/// element, without broadcasting. `None` when the inputs are not of that
/// form.
fn pow_f32_by_scalar(a: &Tensor, b: &Tensor) -> Option<Tensor> {
    let Tensor::F32(x) = a else { return None };
    let src = x.as_slice()?;
    if b.len() != 1 {
        return None;
    }
    // the output has the base's shape, unless the exponent has more axes
    if b.shape().len() > x.ndim() {
        return None;
    }
    let q = b.to_f64_vec()?[0];
    let out = if q == 2.0 {
        map_f32_slice(src, &|v: f32| v * v)
    } else if q == 3.0 {
        // the cube of a float32 is exact in float64 to 72 bits, so one
        // rounding to float64 and one to float32, as powf's result gets
        map_f32_slice(src, &|v: f32| {
            let w = v as f64;
            (w * w * w) as f32
        })
    } else if q == 1.0 {
        src.to_vec()
    } else if q == 0.5 {
        // pow(-0, 0.5) is +0 and pow(-inf, 0.5) is +inf, where sqrt gives
        // -0 and NaN
        map_f32_slice(src, &|v: f32| {
            if v == f32::NEG_INFINITY {
                f32::INFINITY
            } else {
                v.sqrt() + 0.0
            }
        })
    } else {
        map_f32_slice(src, &|v: f32| (v as f64).powf(q) as f32)
    };
    Some(Tensor::F32(ArrayD::from_shape_vec(x.raw_dim(), out).ok()?))
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        if b.dtype() == crate::tensor::DataType::String
            || b.dtype() == crate::tensor::DataType::Bool
        {
            bail!("Pow: exponent must be numeric, got {}", b.dtype());
        }
        if let Some(y) = pow_f32_by_scalar(a, b) {
            return Ok(vec![Value::Tensor(y)]);
        }
        let y = dispatch_num!(a, pow_t(a, b), bail!("Pow does not accept {}", a.dtype()))?;
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {

    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn integer_pow_is_exact_and_mixed_types_work() {
        let b = t(&[2], vec![3i64, 1 << 20]);
        let e = t(&[2], vec![3i64, 3]);
        let p = run("Pow", vec![], 15, &[Some(b), Some(e)]).unwrap();
        assert_eq!(p.to_i64_vec().unwrap(), vec![27, 1i64 << 60]);
        let f = run(
            "Pow",
            vec![],
            15,
            &[Some(t(&[1], vec![2.0f32])), Some(t(&[1], vec![-1i32]))],
        )
        .unwrap();
        assert_eq!(f.to_f64_vec().unwrap(), vec![0.5]);
    }

    #[test]
    fn float32_by_one_exponent_gives_what_powf_in_f64_rounds_to() {
        let base: Vec<f32> = vec![
            0.0,
            -0.0,
            1.5,
            -2.25,
            3.3e-20,
            7.1e12,
            -9.9e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            0.123_456_79,
            -1e-40,
        ];
        for q in [2.0f32, 3.0, 1.0, 0.5, -1.0, 2.5, 0.0] {
            for exponent in [t(&[], vec![q]), t(&[1, 1], vec![q])] {
                let got = run(
                    "Pow",
                    vec![],
                    15,
                    &[Some(t(&[3, 4], base.clone())), Some(exponent.clone())],
                )
                .unwrap();
                assert_eq!(got.shape(), [3, 4]);
                let got = got.to_f64_vec().unwrap();
                for (g, v) in got.iter().zip(&base) {
                    let want = (*v as f64).powf(q as f64) as f32;
                    let g = *g as f32;
                    let same = g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan());
                    assert!(same, "{v} ^ {q}: {g} against {want}");
                }
            }
        }
        // an exponent with more axes than the base broadcasts the base
        let got = run(
            "Pow",
            vec![],
            15,
            &[
                Some(t(&[2], vec![2.0f32, 3.0])),
                Some(t(&[1, 1], vec![2.0f32])),
            ],
        )
        .unwrap();
        assert_eq!(got.shape(), [1, 2]);
        assert_eq!(got.to_f64_vec().unwrap(), vec![4.0, 9.0]);
    }
}
