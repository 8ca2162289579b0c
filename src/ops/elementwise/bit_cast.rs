//! BitCast: reinterpreting a tensor's bytes as another element type.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::one;
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Elem, Tensor};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

/// Little-endian bytes of every element.
fn to_bytes(t: &Tensor) -> Result<(Vec<u8>, usize), KernelError> {
    macro_rules! le {
        ($a:expr, $w:expr) => {
            ($a.iter().flat_map(|v| v.to_le_bytes()).collect(), $w)
        };
    }
    Ok(match t {
        Tensor::F32(a) => le!(a, 4),
        Tensor::F64(a) => le!(a, 8),
        Tensor::F16(a) => le!(a, 2),
        Tensor::BF16(a) => le!(a, 2),
        Tensor::I8(a) => le!(a, 1),
        Tensor::I16(a) => le!(a, 2),
        Tensor::I32(a) => le!(a, 4),
        Tensor::I64(a) => le!(a, 8),
        Tensor::U8(a) => le!(a, 1),
        Tensor::U16(a) => le!(a, 2),
        Tensor::U32(a) => le!(a, 4),
        Tensor::U64(a) => le!(a, 8),
        Tensor::Bool(a) => (a.iter().map(|&b| b as u8).collect(), 1),
        other => bail!("BitCast does not accept {}", other.dtype()),
    })
}

fn from_bytes(dt: DataType, shape: &[usize], b: &[u8]) -> Result<Tensor, KernelError> {
    macro_rules! de {
        ($t:ty, $w:expr) => {{
            let v: Vec<$t> = b
                .chunks_exact($w)
                .map(|c| {
                    let mut arr = [0u8; $w];
                    arr.copy_from_slice(c);
                    <$t>::from_le_bytes(arr)
                })
                .collect();
            <$t as Elem>::wrap(ArrayD::from_shape_vec(IxDyn(shape), v)?)
        }};
    }
    Ok(match dt {
        DataType::Float => de!(f32, 4),
        DataType::Double => de!(f64, 8),
        DataType::Float16 => de!(f16, 2),
        DataType::Bfloat16 => de!(bf16, 2),
        DataType::Int8 => de!(i8, 1),
        DataType::Int16 => de!(i16, 2),
        DataType::Int32 => de!(i32, 4),
        DataType::Int64 => de!(i64, 8),
        DataType::Uint8 => de!(u8, 1),
        DataType::Uint16 => de!(u16, 2),
        DataType::Uint32 => de!(u32, 4),
        DataType::Uint64 => de!(u64, 8),
        DataType::Bool => Tensor::Bool(ArrayD::from_shape_vec(
            IxDyn(shape),
            b.iter().map(|&x| x != 0).collect(),
        )?),
        other => bail!("BitCast cannot produce {other}"),
    })
}

/// The `to` type with the input's shape (BitCast keeps the element size).
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let to = cx
        .attrs
        .int("to")
        .ok_or_else(|| ShapeError::new("BitCast needs attribute 'to'"))?;
    let dt = DataType::from_code(to as i32)
        .ok_or_else(|| ShapeError::new(format!("unknown type {to}")))?;
    let s = shape_of(cx, 0);
    cx.set_tensor(0, dt, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let to = info
        .attrs
        .int("to")
        .ok_or_else(|| KernelError::new("BitCast needs attribute 'to'"))?;
    let to = DataType::from_code(to as i32)
        .ok_or_else(|| KernelError::new(format!("unknown type code {to}")))?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let (bytes, w) = to_bytes(x)?;
        let tw = to.byte_size().unwrap_or(0);
        if tw != w {
            bail!(
                "BitCast from {} to {to} changes the element size ({w} vs {tw} bytes)",
                x.dtype()
            );
        }
        one(from_bytes(to, x.shape(), &bytes)?)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitcast_roundtrip() {
        let t = Tensor::from_vec(&[2], vec![1.0f32, -2.5]).unwrap();
        let (b, w) = to_bytes(&t).unwrap();
        assert_eq!(w, 4);
        let i = from_bytes(DataType::Int32, &[2], &b).unwrap();
        assert_eq!(i.to_i64_vec().unwrap()[0], 1.0f32.to_bits() as i64);
    }
}
