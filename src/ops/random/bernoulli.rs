//! `Bernoulli`: 1 with the input's probability, 0 otherwise, of the
//! input's shape.

use super::stream::stream_of;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};

pub(super) use super::generator::like_shape as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dtype = match info.attrs.int("dtype") {
        None => None,
        Some(c) => Some(
            DataType::from_code(c as i32)
                .ok_or_else(|| KernelError::new(format!("dtype {c} is not a type")))?,
        ),
    };
    let stream = stream_of(info);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("Bernoulli input must be a float tensor, got {}", x.dtype());
        }
        let p = x.to_f64_vec().unwrap_or_default();
        let mut s = stream();
        let v: Vec<f64> = p
            .iter()
            .map(|&p| if s.uniform() < p { 1.0 } else { 0.0 })
            .collect();
        let t = Tensor::from_vec(x.shape(), v)?.cast_to(dtype.unwrap_or(x.dtype()))?;
        Ok(vec![Value::Tensor(t)])
    }))
}
