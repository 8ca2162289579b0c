//! IsInf: a bool tensor, true where a float element is an infinity of a
//! sign that `detect_negative` / `detect_positive` select.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::array;
use crate::tensor::{Elem, Value};

pub use super::value_rules::bool_like_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let neg = info.attrs.int_or("detect_negative", 1) != 0;
    let pos = info.attrs.int_or("detect_positive", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("IsInf does not accept {}", x.dtype());
        }
        let v = x.to_f64_vec().unwrap_or_default();
        let out: Vec<bool> = v
            .iter()
            .map(|f| (pos && *f == f64::INFINITY) || (neg && *f == f64::NEG_INFINITY))
            .collect();
        Ok(vec![Value::Tensor(bool::wrap(array(x.shape(), out)?))])
    }))
}
