//! Element type conversion used by the shell (`.astype`, input conversion):
//! through i64 between integer types, through f64 otherwise.

use super::{DataType, Tensor, TensorError};
use half::{bf16, f16};
use ndarray::ArrayD;

fn from_f64(dt: DataType, v: ArrayD<f64>) -> Result<Tensor, TensorError> {
    Ok(match dt {
        DataType::Float => Tensor::F32(v.mapv(|x| x as f32)),
        DataType::Double => Tensor::F64(v),
        DataType::Float16 => Tensor::F16(v.mapv(f16::from_f64)),
        DataType::Bfloat16 => Tensor::BF16(v.mapv(bf16::from_f64)),
        DataType::Int8 => Tensor::I8(v.mapv(|x| x as i8)),
        DataType::Int16 => Tensor::I16(v.mapv(|x| x as i16)),
        DataType::Int32 => Tensor::I32(v.mapv(|x| x as i32)),
        DataType::Int64 => Tensor::I64(v.mapv(|x| x as i64)),
        DataType::Uint8 => Tensor::U8(v.mapv(|x| x as u8)),
        DataType::Uint16 => Tensor::U16(v.mapv(|x| x as u16)),
        DataType::Uint32 => Tensor::U32(v.mapv(|x| x as u32)),
        DataType::Uint64 => Tensor::U64(v.mapv(|x| x as u64)),
        DataType::Bool => Tensor::Bool(v.mapv(|x| x != 0.0)),
        DataType::String => Tensor::Str(v.mapv(|x| x.to_string())),
        other => return Err(TensorError::new(format!("cannot convert to {other}"))),
    })
}

fn from_i64(dt: DataType, v: ArrayD<i64>) -> Result<Tensor, TensorError> {
    Ok(match dt {
        DataType::Int8 => Tensor::I8(v.mapv(|x| x as i8)),
        DataType::Int16 => Tensor::I16(v.mapv(|x| x as i16)),
        DataType::Int32 => Tensor::I32(v.mapv(|x| x as i32)),
        DataType::Int64 => Tensor::I64(v),
        DataType::Uint8 => Tensor::U8(v.mapv(|x| x as u8)),
        DataType::Uint16 => Tensor::U16(v.mapv(|x| x as u16)),
        DataType::Uint32 => Tensor::U32(v.mapv(|x| x as u32)),
        DataType::Uint64 => Tensor::U64(v.mapv(|x| x as u64)),
        other => from_f64(other, v.mapv(|x| x as f64))?,
    })
}

impl Tensor {
    /// Converts the elements to another type (C-style: truncation for
    /// float → int, wrap-around between integer types).
    pub fn cast_to(&self, to: DataType) -> Result<Tensor, TensorError> {
        if self.dtype() == to {
            return Ok(self.clone());
        }
        let shape = self.shape().to_vec();
        if let Tensor::Str(a) = self {
            let parsed: Result<Vec<f64>, _> = a.iter().map(|s| s.trim().parse::<f64>()).collect();
            let v = parsed.map_err(|_| TensorError::new("strings that are not numbers"))?;
            return from_f64(
                to,
                ArrayD::from_shape_vec(shape, v).map_err(|e| TensorError::new(e.to_string()))?,
            );
        }
        if self.dtype().is_int() && to != DataType::String {
            if let Ok(v) = self.to_i64_vec() {
                let a = ArrayD::from_shape_vec(shape, v)
                    .map_err(|e| TensorError::new(e.to_string()))?;
                return from_i64(to, a);
            }
        }
        let v = self
            .to_f64_vec()
            .ok_or_else(|| TensorError::new(format!("cannot convert {} to {to}", self.dtype())))?;
        let a = ArrayD::from_shape_vec(shape, v).map_err(|e| TensorError::new(e.to_string()))?;
        from_f64(to, a)
    }

    /// Converts only when no value changes: integers to floats, float64 to
    /// float32 (rounding allowed), integers to narrower integers when every
    /// value fits.
    pub fn convert_exact(&self, to: DataType) -> Result<Tensor, TensorError> {
        let from = self.dtype();
        if from == to {
            return Ok(self.clone());
        }
        let ok = (from.is_int() && to.is_float())
            || (from == DataType::Bool && to == DataType::Bool)
            || (from.is_float() && to.is_float() && !to.is_float8())
            || (from.is_int() && to.is_int() && {
                let back = self.cast_to(to)?.cast_to(from)?;
                back == *self
            });
        if !ok {
            return Err(TensorError::new(format!(
                "a {from} value cannot be converted to {to} without changing it"
            )));
        }
        self.cast_to(to)
    }
}
