//! Shrink.

use super::elementwise::Num;
use super::f64_values::one;
use super::typed;
use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::Tensor;
use ndarray::ArrayD;

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

pub fn shrink(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
