//! Relu: `max(x, 0)` on every numeric type.

use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::typed;
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

pub use super::value_rules::same_as_input as shape;

fn relu_typed<T: Num>(t: &Tensor) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(t, "X")?;
    let z = T::zero();
    Ok(T::wrap(a.mapv(|v| if v > z { v } else { z })))
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = dispatch_num!(
            x,
            relu_typed(x),
            bail!("Relu does not accept {}", x.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}
