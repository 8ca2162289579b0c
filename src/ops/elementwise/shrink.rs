//! Shrink: `x + bias` below `-lambd`, `x - bias` above `lambd`, 0 between.

use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::one;
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::typed;
use crate::tensor::Tensor;
use ndarray::ArrayD;

pub use super::value_rules::same_as_input as shape;

fn shrink_typed<T: Num>(x: &Tensor, bias: f64, lambd: f64) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "input")?;
    Ok(T::wrap(a.mapv(|v| {
        let f = v.to_f64();
        if f < -lambd {
            T::from_f64(f + bias)
        } else if f > lambd {
            T::from_f64(f - bias)
        } else {
            T::zero()
        }
    })))
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let bias = info.attrs.float_or("bias", 0.0) as f64;
    let lambd = info.attrs.float_or("lambd", 0.5) as f64;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        one(dispatch_num!(
            x,
            shrink_typed(x, bias, lambd),
            bail!("Shrink does not accept {}", x.dtype())
        )?)
    }))
}
