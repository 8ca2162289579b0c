//! IsNaN: a bool tensor, true where a float element is NaN.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::array;
use crate::tensor::{Elem, Value};

pub use super::value_rules::bool_like_input as shape;

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("IsNaN does not accept {}", x.dtype());
        }
        let v = x.to_f64_vec().unwrap_or_default();
        let out: Vec<bool> = v.iter().map(|f| f.is_nan()).collect();
        Ok(vec![Value::Tensor(bool::wrap(array(x.shape(), out)?))])
    }))
}
