//! `RegexFullMatch`: whether each string matches the `pattern` whole.

use super::string_values::strings_of;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    cx.set_tensor(0, DataType::Bool, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let pat = info
        .attrs
        .string("pattern")
        .ok_or_else(|| KernelError::new("RegexFullMatch needs attribute 'pattern'"))?;
    let re = regex::Regex::new(&format!("^(?:{pat})$"))
        .map_err(|e| KernelError::new(format!("invalid pattern '{pat}': {e}")))?;
    Ok(Box::new(move |_, ins| {
        let x = strings_of(tensor_in(ins, 0)?, "X")?;
        Ok(vec![Value::Tensor(Tensor::Bool(x.map(|s| re.is_match(s))))])
    }))
}
