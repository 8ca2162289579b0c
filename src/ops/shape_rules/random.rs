//! Rules for the random generators.

use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;
use crate::value_type::TypeInfo;

fn dtype(cx: &InferCtx, default: Option<DataType>) -> Option<DataType> {
    cx.attrs
        .int("dtype")
        .and_then(|c| DataType::from_code(c as i32))
        .or(default)
}

pub fn random(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = dtype(cx, Some(DataType::Float)).unwrap_or(DataType::Float);
    let shape = cx.attrs.ints("shape").unwrap_or_default();
    cx.set(0, TypeInfo::fixed(dt, &shape));
    Ok(())
}

/// `*Like` and Bernoulli: the input's shape; the dtype attribute or the
/// input's type.
pub fn random_like(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = dtype(cx, cx.elem(0)).ok_or_else(|| ShapeError("unknown output type".into()))?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, dt, shape);
    Ok(())
}

pub fn multinomial(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = match cx.attrs.int_or("dtype", 6) {
        7 => DataType::Int64,
        _ => DataType::Int32,
    };
    let batch = cx.shape(0).and_then(|s| s.first().cloned()).flatten();
    let n = cx.attrs.int_or("sample_size", 1);
    cx.set_tensor(0, dt, Some(vec![batch, Some(crate::expr::Expr::int(n))]));
    Ok(())
}
