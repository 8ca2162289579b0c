//! `Range`: `start`, `start + delta`, ... up to `limit` (exclusive).

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{out1, tensor_from_f64};
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::{DataType, Tensor};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let get = |i: usize| cx.value(i).and_then(|v| v.values.first().cloned());
    let (s, l, d) = (get(0), get(1), get(2));
    let dim = match (&s, &l, &d) {
        (Some(s), Some(l), Some(d)) => match d.as_int() {
            Some(0) => return Err(ShapeError::new("Range delta is 0")),
            Some(dv) if dv > 0 => Some(l.sub(s).ceil_div(d)),
            Some(_) => Some(s.sub(l).ceil_div(&d.neg())),
            None => None,
        },
        _ => None,
    };
    // a constant empty range has length 0, not a negative one
    let dim = dim.map(|e| match e.as_int() {
        Some(v) if v < 0 => Expr::int(0),
        _ => e,
    });
    // bounds that depend on data give a data-dependent length
    let dim = Some(dim.unwrap_or_else(|| cx.fresh()));
    if let (Some(s), Some(d), Some(n)) = (&s, &d, dim.as_ref().and_then(|e| e.as_int())) {
        if (0..=1024).contains(&n) {
            let vals = (0..n).map(|i| s.add(&d.mul(&Expr::int(i)))).collect();
            cx.set_value(0, SymValue::vector(vals));
        }
    }
    cx.set_tensor(0, elem, Some(vec![dim]));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let s = tensor_in(ins, 0)?;
        let l = tensor_in(ins, 1)?;
        let d = tensor_in(ins, 2)?;
        if s.dtype() != l.dtype() || s.dtype() != d.dtype() {
            bail!("start, limit and delta must have one type");
        }
        if s.len() != 1 || l.len() != 1 || d.len() != 1 {
            bail!("start, limit and delta must be scalars");
        }
        let dt = s.dtype();
        if dt.is_int() {
            let (a, b, c) = (
                s.to_i64_vec()?[0] as i128,
                l.to_i64_vec()?[0] as i128,
                d.to_i64_vec()?[0] as i128,
            );
            if c == 0 {
                bail!("Range delta cannot be 0");
            }
            let (span, step) = if c < 0 { (a - b, -c) } else { (b - a, c) };
            let n = (span + step - 1).div_euclid(step).max(0);
            let Ok(len) = usize::try_from(n) else {
                bail!("Range has too many elements ({n})");
            };
            crate::tensor::budget::check(&[len], 16)?;
            let v: Vec<f64> = (0..n).map(|i| (a + i * c) as f64).collect();
            if dt == DataType::Int64 {
                let v: Vec<i64> = (0..n).map(|i| (a + i * c) as i64).collect();
                return out1(Tensor::from_vec(&[v.len()], v)?);
            }
            return out1(tensor_from_f64(dt, &[v.len()], v)?);
        }
        let f = |t: &Tensor| {
            t.to_f64_vec()
                .and_then(|v| v.first().copied())
                .ok_or_else(|| KernelError::new("Range needs numbers"))
        };
        let (a, b, c) = (f(s)?, f(l)?, f(d)?);
        if c == 0.0 {
            bail!("Range delta cannot be 0");
        }
        let n = ((b - a) / c).ceil().max(0.0);
        if !n.is_finite() || n >= u64::MAX as f64 {
            bail!("Range has too many elements ({n})");
        }
        crate::tensor::budget::check(&[n as usize], 16)?;
        let n = n as usize;
        if dt == DataType::Float {
            let (a, c) = (a as f32, c as f32);
            let v: Vec<f32> = (0..n).map(|i| a + i as f32 * c).collect();
            return out1(Tensor::from_vec(&[n], v)?);
        }
        out1(tensor_from_f64(
            dt,
            &[n],
            (0..n).map(|i| a + i as f64 * c).collect(),
        )?)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    #[test]
    fn range_counts_down_and_rejects_a_zero_delta() {
        let r = run(
            kernel,
            11,
            vec![],
            vec![
                Some(Tensor::scalar(10i32)),
                Some(Tensor::scalar(4i32)),
                Some(Tensor::scalar(-3i32)),
            ],
            1,
        )
        .unwrap();
        assert_eq!(r[0], Tensor::from_vec(&[2], vec![10i32, 7]).unwrap());
        let zero = run(
            kernel,
            11,
            vec![],
            vec![
                Some(Tensor::scalar(1i64)),
                Some(Tensor::scalar(1i64)),
                Some(Tensor::scalar(0i64)),
            ],
            1,
        );
        assert!(zero.is_err(), "delta 0 must fail");
    }
}
