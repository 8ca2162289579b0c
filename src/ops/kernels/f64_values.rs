//! Tensors to and from `f64` vectors: the helpers the kernels that compute
//! in f64 (losses, signal processing, the ML operators, ...) share.

use super::numeric::Num;
use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::KernelError;
use crate::tensor::{DataType, Tensor, Value};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

/// The f64 sum of `f(v)` over a slice, in eight interleaved partial sums:
/// independent additions the compiler vectorises and the CPU overlaps,
/// where one running sum waits for each addition in turn (and exact
/// wherever the f64 sum is: 2^28 float32 ones give 268435456).
#[inline]
pub fn interleaved_sum<T: Copy>(s: &[T], f: impl Fn(T) -> f64) -> f64 {
    let mut acc = [0f64; 8];
    let mut blocks = s.chunks_exact(8);
    for c in &mut blocks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f(v);
        }
    }
    let tail: f64 = blocks.remainder().iter().map(|&v| f(v)).sum();
    acc.iter().sum::<f64>() + tail
}

/// A numeric tensor's elements as f64 (row-major).
pub fn f64_of(t: &Tensor, what: &str) -> Result<Vec<f64>, KernelError> {
    match t.to_f64_vec() {
        Some(v) => Ok(v),
        None => bail!("{what} must be numeric, got {}", t.dtype()),
    }
}

/// A float tensor of type `dtype` from f64 values.
pub fn float_of(dtype: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    let n: usize = shape.iter().product();
    if n != v.len() {
        bail!("{} values do not fill shape {shape:?}", v.len());
    }
    let sh = IxDyn(shape);
    Ok(match dtype {
        DataType::Float => Tensor::F32(ArrayD::from_shape_vec(
            sh,
            v.iter().map(|&x| x as f32).collect(),
        )?),
        DataType::Double => Tensor::F64(ArrayD::from_shape_vec(sh, v)?),
        DataType::Float16 => Tensor::F16(ArrayD::from_shape_vec(
            sh,
            v.iter().map(|&x| f16::from_f64(x)).collect(),
        )?),
        DataType::Bfloat16 => Tensor::BF16(ArrayD::from_shape_vec(
            sh,
            v.iter().map(|&x| bf16::from_f64(x)).collect(),
        )?),
        other => bail!("expected a float type, got {other}"),
    })
}

/// A float tensor of the same type as `like`.
pub fn float_like(like: &Tensor, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    float_of(like.dtype(), shape, v)
}

pub(crate) fn one(t: Tensor) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(t)])
}

pub(crate) fn require_float(t: &Tensor, what: &str) -> Result<(), KernelError> {
    if !matches!(
        t.dtype(),
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    ) {
        bail!("{what} must be a float tensor, got {}", t.dtype());
    }
    Ok(())
}

/// The element count of a shape about to be allocated (in f64), checked
/// against the memory budget.
pub(crate) fn numel(shape: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(shape, 8)?)
}

pub(crate) fn dim_of(v: i64, what: &str) -> Result<usize, KernelError> {
    if v < 0 {
        bail!("{what} must be non-negative, got {v}");
    }
    Ok(v as usize)
}

fn num_from_typed<T: Num>(shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    Ok(T::wrap(ArrayD::from_shape_vec(
        IxDyn(shape),
        v.into_iter().map(T::from_f64).collect(),
    )?))
}

/// A numeric tensor of type `dt` from f64 values.
pub fn num_from_f64(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    let probe = Tensor::zeros(dt, &[0])?;
    dispatch_num!(
        probe,
        num_from_typed(shape, v),
        bail!("expected a numeric type, got {dt}")
    )
}

/// The elements of a numeric tensor as f64, in row-major order.
pub fn to_f64s(t: &Tensor, what: &str) -> Result<Vec<f64>, KernelError> {
    if matches!(t, Tensor::Str(_) | Tensor::Bool(_) | Tensor::Small { .. }) {
        bail!("{what} must be numeric, got {}", t.dtype());
    }
    match t {
        Tensor::F32(a) if a.is_standard_layout() => {
            if let Some(s) = a.as_slice() {
                return Ok(s.iter().map(|&v| v as f64).collect());
            }
        }
        Tensor::F64(a) if a.is_standard_layout() => {
            if let Some(s) = a.as_slice() {
                return Ok(s.to_vec());
            }
        }
        _ => {}
    }
    t.to_f64_vec()
        .ok_or_else(|| KernelError::new(format!("{what} must be numeric, got {}", t.dtype())))
}

/// A tensor of element type `dtype` from f64 values (saturating casts for
/// integers).
pub fn from_f64s(dtype: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    let sh = IxDyn(shape);
    Ok(match dtype {
        DataType::Float => Tensor::F32(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as f32).collect(),
        )?),
        DataType::Double => Tensor::F64(ArrayD::from_shape_vec(sh, v)?),
        DataType::Float16 => Tensor::F16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(f16::from_f64).collect(),
        )?),
        DataType::Bfloat16 => Tensor::BF16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(bf16::from_f64).collect(),
        )?),
        DataType::Int8 => Tensor::I8(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i8).collect(),
        )?),
        DataType::Int16 => Tensor::I16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i16).collect(),
        )?),
        DataType::Int32 => Tensor::I32(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i32).collect(),
        )?),
        DataType::Int64 => Tensor::I64(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as i64).collect(),
        )?),
        DataType::Uint8 => Tensor::U8(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u8).collect(),
        )?),
        DataType::Uint16 => Tensor::U16(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u16).collect(),
        )?),
        DataType::Uint32 => Tensor::U32(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u32).collect(),
        )?),
        DataType::Uint64 => Tensor::U64(ArrayD::from_shape_vec(
            sh,
            v.into_iter().map(|x| x as u64).collect(),
        )?),
        other => bail!("cannot produce a {other} tensor here"),
    })
}

/// `t` broadcast (numpy, unidirectional) to `shape`, as f64 in row-major order.
pub fn broadcast_to(t: &Tensor, shape: &[usize], what: &str) -> Result<Vec<f64>, KernelError> {
    let v = to_f64s(t, what)?;
    let a = ArrayD::from_shape_vec(IxDyn(t.shape()), v)?;
    let b = a.broadcast(IxDyn(shape)).ok_or_else(|| {
        KernelError::new(format!(
            "{what} of shape {:?} does not broadcast to {shape:?}",
            t.shape()
        ))
    })?;
    Ok(b.iter().cloned().collect())
}
