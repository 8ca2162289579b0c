//! Pow: a numeric base raised to a numeric exponent of any type, exact
//! (wrapping) for integer bases and exponents.

use crate::bail;
use crate::dispatch_num;
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

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        if b.dtype() == crate::tensor::DataType::String
            || b.dtype() == crate::tensor::DataType::Bool
        {
            bail!("Pow: exponent must be numeric, got {}", b.dtype());
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
}
