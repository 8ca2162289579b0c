//! PRelu: `x` where positive, `slope * x` elsewhere; the slope broadcasts
//! to `x`.

use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::{typed, zip2};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

pub use super::value_rules::broadcast_inputs as shape;

fn prelu_t<T: Num>(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "X")?;
    let s: &ArrayD<T> = typed(b, "slope")?;
    let out = zip2(x, s, |p, q| if p < T::zero() { p.mul(q) } else { p })?;
    if out.shape() != x.shape() {
        bail!(
            "PRelu: slope {:?} does not broadcast to X {:?}",
            s.shape(),
            x.shape()
        );
    }
    Ok(T::wrap(out))
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        let y = dispatch_num!(
            a,
            prelu_t(a, b),
            bail!("PRelu does not accept {}", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}
