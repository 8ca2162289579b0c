//! Where: elements of X where the condition holds and of Y elsewhere, the
//! three broadcast together.

use super::value_rules::{broadcast_as, propagate_all};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::same_pair;
use crate::ops::kernels::{typed, zip3};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Elem, Value};
use ndarray::ArrayD;

/// Where: the broadcast of condition, X and Y, with X's type.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.elem(1) {
        Some(e) => e,
        None => cx.elem_req(2)?,
    };
    broadcast_as(cx, elem)?;
    // a known condition selects; an unknown one still gives a value where
    // both choices agree
    propagate_all(cx, |a| match (a.len(), a[0].as_int()) {
        (3, Some(c)) => Some(if c != 0 { a[1].clone() } else { a[2].clone() }),
        (3, None) if a[1] == a[2] => Some(a[1].clone()),
        _ => None,
    });
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let c: &ArrayD<bool> = typed(tensor_in(ins, 0)?, "condition")?;
        let a = tensor_in(ins, 1)?;
        let b = tensor_in(ins, 2)?;
        let out = same_pair!(a, b, x, y => Elem::wrap(zip3(c, x, y, |k, p, q| if k { p } else { q })?),
            bail!("Where: X and Y must have the same type, got {} and {}", a.dtype(), b.dtype()));
        Ok(vec![Value::Tensor(out)])
    }))
}

#[cfg(test)]
mod tests {
    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn where_broadcasts_condition_and_choices() {
        let c = t(&[2], vec![true, false]);
        let x = t(&[2, 1], vec![1i64, 2]);
        let y = t(&[], vec![0i64]);
        let w = run("Where", vec![], 16, &[Some(c), Some(x), Some(y)]).unwrap();
        assert_eq!(w.shape(), &[2, 2]);
        assert_eq!(w.to_i64_vec().unwrap(), vec![1, 0, 2, 0]);
    }
}
