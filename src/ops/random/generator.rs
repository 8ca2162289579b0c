//! What the four generators share: the output type (`dtype`), the shape
//! (the `shape` attribute, or the input's for the `*Like` forms) and the
//! kernel that fills it with uniform or normal draws.

use super::stream::stream_of;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::TypeInfo;

fn dtype(cx: &InferCtx, default: Option<DataType>) -> Option<DataType> {
    cx.attrs
        .int("dtype")
        .and_then(|c| DataType::from_code(c as i32))
        .or(default)
}

/// RandomUniform / RandomNormal: the `shape` attribute, `dtype` or float.
pub(super) fn fixed_shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = dtype(cx, Some(DataType::Float)).unwrap_or(DataType::Float);
    let shape = cx.attrs.ints("shape").unwrap_or_default();
    cx.set(0, TypeInfo::fixed(dt, &shape));
    Ok(())
}

/// `*Like` and Bernoulli: the input's shape; the dtype attribute or the
/// input's type.
pub(super) fn like_shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let dt = dtype(cx, cx.elem(0)).ok_or_else(|| ShapeError::new("unknown output type"))?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, dt, shape);
    Ok(())
}

pub(super) fn dtype_attr(info: &NodeInfo, default: DataType) -> Result<DataType, KernelError> {
    match info.attrs.int("dtype") {
        None => Ok(default),
        Some(c) => DataType::from_code(c as i32)
            .filter(|t| t.is_float())
            .ok_or_else(|| KernelError::new(format!("dtype {c} is not a float type"))),
    }
}

pub(super) fn checked_shape(shape: &[i64]) -> Result<Vec<usize>, KernelError> {
    let mut n: usize = 1;
    let mut out = Vec::with_capacity(shape.len());
    for &d in shape {
        if d < 0 {
            bail!("shape {shape:?} has a negative dimension");
        }
        n = n
            .checked_mul(d as usize)
            .filter(|&n| n <= 1 << 31)
            .ok_or_else(|| KernelError::new(format!("shape {shape:?} is too large")))?;
        out.push(d as usize);
    }
    Ok(out)
}

pub(super) fn floats(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Value, KernelError> {
    Ok(Value::Tensor(Tensor::from_vec(shape, v)?.cast_to(dt)?))
}

pub(super) fn generator(info: &NodeInfo, like: bool, normal: bool) -> Result<Kernel, KernelError> {
    let (a, b) = if normal {
        (
            info.attrs.float_or("mean", 0.0) as f64,
            info.attrs.float_or("scale", 1.0) as f64,
        )
    } else {
        (
            info.attrs.float_or("low", 0.0) as f64,
            info.attrs.float_or("high", 1.0) as f64,
        )
    };
    let fixed = if like {
        None
    } else {
        let s = info
            .attrs
            .ints("shape")
            .ok_or_else(|| KernelError::new("the 'shape' attribute is required"))?;
        Some(checked_shape(&s)?)
    };
    let dtype = info.attrs.int("dtype");
    let dt = dtype_attr(info, DataType::Float)?;
    let stream = stream_of(info);
    Ok(Box::new(move |_, ins| {
        let (shape, dt) = match &fixed {
            Some(s) => (s.clone(), dt),
            None => {
                let x = tensor_in(ins, 0)?;
                let t = if dtype.is_some() { dt } else { x.dtype() };
                if !t.is_float() {
                    bail!("the output type must be a float type, got {t}");
                }
                (x.shape().to_vec(), t)
            }
        };
        let n: usize = shape.iter().product();
        let mut s = stream();
        let v = (0..n)
            .map(|_| {
                if normal {
                    a + b * s.normal()
                } else {
                    a + (b - a) * s.uniform()
                }
            })
            .collect();
        Ok(vec![floats(dt, &shape, v)?])
    }))
}
