//! Mod: the remainder taking the divisor's sign (`fmod = 0`, integers
//! only) or the dividend's (`fmod = 1`, C's fmod).

use super::value_rules::{broadcast_inputs, propagate};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::{ew_dispatch_float, ew_dispatch_int, IntOps, Num};
use crate::ops::kernels::{typed, zip2};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;
use std::cell::Cell;

/// The broadcast shape; known integer values propagate (floor modulo).
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    // integer Mod takes the divisor's sign (floor modulo)
    if cx.elem(0).is_some_and(|e| e.is_int()) && cx.attrs.int_or("fmod", 0) == 0 {
        propagate(cx, |a, b| {
            let (x, y) = (a.as_int()?, b.as_int()?);
            let r = x.checked_rem_euclid(y)?;
            Some(Expr::int(if y < 0 && r != 0 { r + y } else { r }))
        });
    }
    Ok(())
}

/// Python-style float modulo (sign of the divisor).
fn float_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else if r == 0.0 {
        // the result takes the divisor's sign
        0.0f64.copysign(b)
    } else {
        r
    }
}

fn mod_int<T: IntOps>(a: &Tensor, b: &Tensor, fmod: bool) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    let zero_div = Cell::new(false);
    let out = zip2(x, y, |p, q| match p.rem_trunc(q) {
        None => {
            zero_div.set(true);
            T::zero()
        }
        Some(r) => {
            if !fmod && r != T::zero() && ((r < T::zero()) != (q < T::zero())) {
                r.add(q)
            } else {
                r
            }
        }
    })?;
    if zero_div.get() {
        bail!("Mod: integer division by zero");
    }
    Ok(T::wrap(out))
}

fn mod_float<T: Num>(a: &Tensor, b: &Tensor, fmod: bool) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    let out = zip2(x, y, |p, q| {
        let (p, q) = (p.to_f64(), q.to_f64());
        T::from_f64(if fmod { p % q } else { float_mod(p, q) })
    })?;
    Ok(T::wrap(out))
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let fmod = info.attrs.int_or("fmod", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        if a.dtype() != b.dtype() {
            bail!(
                "Mod: operands must have the same type, got {} and {}",
                a.dtype(),
                b.dtype()
            );
        }
        let y = if a.dtype().is_float() {
            ew_dispatch_float!(
                a,
                mod_float(a, b, fmod),
                bail!("Mod does not accept {}", a.dtype())
            )?
        } else {
            ew_dispatch_int!(
                a,
                mod_int(a, b, fmod),
                bail!("Mod does not accept {}", a.dtype())
            )?
        };
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {

    use crate::ops::test_kernel::{int as int_attr, run_op as run, tensor as t};

    #[test]
    fn integer_mod_follows_the_divisor_sign_unless_fmod() {
        let a = t(&[4], vec![-7i32, 7, -7, 7]);
        let b = t(&[4], vec![3i32, -3, -3, 3]);
        let m = run("Mod", vec![], 13, &[Some(a.clone()), Some(b.clone())]).unwrap();
        assert_eq!(m.to_i64_vec().unwrap(), vec![2, -2, -1, 1]);
        let f = run(
            "Mod",
            vec![int_attr("fmod", 1)],
            13,
            &[Some(a.clone()), Some(b)],
        )
        .unwrap();
        assert_eq!(f.to_i64_vec().unwrap(), vec![-1, 1, -1, 1]);
        let zero = t(&[1], vec![0i32]);
        let e = run("Mod", vec![], 13, &[Some(a), Some(zero)]).unwrap_err();
        assert!(e.to_string().contains("zero"), "{e}");
        // i8::MIN % -1 must not overflow
        let m = run(
            "Mod",
            vec![],
            13,
            &[Some(t(&[1], vec![i8::MIN])), Some(t(&[1], vec![-1i8]))],
        )
        .unwrap();
        assert_eq!(m.to_i64_vec().unwrap(), vec![0]);
    }
}
