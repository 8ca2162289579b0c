//! Conversion between tensor values and their protobuf messages:
//! `TensorProto` (raw and typed fields) and the backend-test containers
//! (SequenceProto, MapProto, OptionalProto). The bytes of `raw_data` are
//! decoded by [`Tensor::from_le_bytes`], which uses loaded weights in place.

use super::{MapProto, OptionalProto, SequenceProto, TensorProto};
use crate::tensor::{concat_flat, raw_byte_len, DataType, Elem, Map, Tensor, TensorError, Value};
use ndarray::{ArrayD, IxDyn};

fn shape_of(p: &TensorProto) -> Result<Vec<usize>, TensorError> {
    let mut total: usize = 1;
    let mut out = Vec::with_capacity(p.dims.len());
    for &d in &p.dims {
        if d < 0 {
            return Err(TensorError::new(format!(
                "tensor '{}' has a negative dimension {d}",
                p.name()
            )));
        }
        let d = usize::try_from(d).map_err(|_| TensorError::new("dimension too large"))?;
        total = total.checked_mul(d).ok_or_else(|| {
            TensorError::new(format!(
                "tensor '{}' has an absurd shape {:?}",
                p.name(),
                p.dims
            ))
        })?;
        out.push(d);
    }
    Ok(out)
}

fn check_count(p: &TensorProto, got: usize, want: usize, field: &str) -> Result<(), TensorError> {
    if got != want {
        return Err(TensorError::new(format!(
            "tensor '{}' of shape {:?} needs {want} values, {field} holds {got}",
            p.name(),
            p.dims
        )));
    }
    Ok(())
}

fn arr<T>(p: &TensorProto, shape: &[usize], v: Vec<T>) -> Result<ArrayD<T>, TensorError> {
    ArrayD::from_shape_vec(IxDyn(shape), v)
        .map_err(|e| TensorError::new(format!("tensor '{}': {e}", p.name())))
}

/// The field a tensor's raw bytes are counted in, for error messages.
fn raw_field(dt: DataType) -> &'static str {
    match dt {
        DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => "packed 4-bit data (bytes)",
        DataType::Int2 | DataType::Uint2 => "packed 2-bit data (bytes)",
        _ => "raw_data (bytes)",
    }
}

/// Decodes a `TensorProto` whose data is inline (`raw_data` or typed
/// fields). External data must have been resolved into `raw_data` first
/// (see [`super::resolve_external_data`]).
pub fn from_proto(p: &TensorProto) -> Result<Tensor, TensorError> {
    if p.segment.is_some() {
        return Err(TensorError::new(format!(
            "tensor '{}' is segmented; segmented tensors are not supported",
            p.name()
        )));
    }
    if p.data_location == Some(1) && p.raw_data.is_none() {
        return Err(TensorError::new(format!(
            "tensor '{}' keeps its data in an external file that was not loaded",
            p.name()
        )));
    }
    let code = p.data_type();
    let dt = DataType::from_code(code).ok_or_else(|| {
        TensorError::new(format!(
            "tensor '{}' has unknown data type {code}",
            p.name()
        ))
    })?;
    let shape = shape_of(p)?;
    // ndarray refuses shapes whose nonzero dims multiply past isize::MAX,
    // even with a zero dim (`[0, 2^62, 4]`): refuse them here, with a name
    let nonzero = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&m| m <= isize::MAX as usize);
    if nonzero.is_none() {
        return Err(TensorError::new(format!(
            "tensor '{}' has dims {:?} whose product overflows",
            p.name(),
            p.dims
        )));
    }
    let n: usize = shape.iter().product();
    let unsupported = || {
        TensorError::new(format!(
            "tensor '{}': element type {dt} is not supported",
            p.name()
        ))
    };
    if dt == DataType::String {
        check_count(p, p.string_data.len(), n, "string_data")?;
        let strings = p
            .string_data
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        return Ok(Tensor::Str(arr(p, &shape, strings)?));
    }
    if let Some(raw) = &p.raw_data {
        let want = raw_byte_len(dt, n).ok_or_else(unsupported)?;
        check_count(p, raw.len(), want, raw_field(dt))?;
        return Tensor::from_le_bytes(dt, &shape, raw)
            .map_err(|e| TensorError::new(format!("tensor '{}': {e}", p.name())));
    }
    fn typed<S, T: Elem>(
        p: &TensorProto,
        shape: &[usize],
        n: usize,
        field: &[S],
        name: &str,
        conv: impl Fn(&S) -> T,
    ) -> Result<Tensor, TensorError> {
        check_count(p, field.len(), n, name)?;
        Ok(T::wrap(arr(p, shape, field.iter().map(conv).collect())?))
    }
    let small = |codes: Vec<u8>| -> Result<Tensor, TensorError> {
        Ok(Tensor::Small {
            dtype: dt,
            data: arr(p, &shape, codes)?,
        })
    };
    let s = &shape;
    match dt {
        DataType::Float => typed(p, s, n, &p.float_data, "float_data", |&v| v),
        DataType::Double => typed(p, s, n, &p.double_data, "double_data", |&v| v),
        DataType::Float16 => typed(p, s, n, &p.int32_data, "int32_data", |&v| {
            half::f16::from_bits(v as u16)
        }),
        DataType::Bfloat16 => typed(p, s, n, &p.int32_data, "int32_data", |&v| {
            half::bf16::from_bits(v as u16)
        }),
        DataType::Int8 => typed(p, s, n, &p.int32_data, "int32_data", |&v| v as i8),
        DataType::Int16 => typed(p, s, n, &p.int32_data, "int32_data", |&v| v as i16),
        DataType::Int32 => typed(p, s, n, &p.int32_data, "int32_data", |&v| v),
        DataType::Int64 => typed(p, s, n, &p.int64_data, "int64_data", |&v| v),
        DataType::Uint8 => typed(p, s, n, &p.int32_data, "int32_data", |&v| v as u8),
        DataType::Uint16 => typed(p, s, n, &p.int32_data, "int32_data", |&v| v as u16),
        DataType::Uint32 => typed(p, s, n, &p.uint64_data, "uint64_data", |&v| v as u32),
        DataType::Uint64 => typed(p, s, n, &p.uint64_data, "uint64_data", |&v| v),
        DataType::Bool => typed(p, s, n, &p.int32_data, "int32_data", |&v| v != 0),
        DataType::Float8E4M3FN
        | DataType::Float8E4M3FNUZ
        | DataType::Float8E5M2
        | DataType::Float8E5M2FNUZ
        | DataType::Float8E8M0 => {
            check_count(p, p.int32_data.len(), n, "int32_data")?;
            small(p.int32_data.iter().map(|&v| v as u8).collect())
        }
        DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => {
            let bytes: Vec<u8> = p.int32_data.iter().map(|&v| v as u8).collect();
            check_count(p, bytes.len(), n.div_ceil(2), raw_field(dt))?;
            small(crate::tensor::unpack(&bytes, n, 4))
        }
        DataType::Int2 | DataType::Uint2 => {
            let bytes: Vec<u8> = p.int32_data.iter().map(|&v| v as u8).collect();
            check_count(p, bytes.len(), n.div_ceil(4), raw_field(dt))?;
            small(crate::tensor::unpack(&bytes, n, 2))
        }
        _ => Err(unsupported()),
    }
}

/// Encodes a tensor as a `TensorProto` (numbers in `raw_data`, strings in
/// `string_data`).
pub fn to_proto(t: &Tensor, name: &str) -> TensorProto {
    let mut p = TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(t.dtype().code()),
        ..Default::default()
    };
    if !name.is_empty() {
        p.name = Some(name.to_string());
    }
    match (t, t.to_le_bytes()) {
        (Tensor::Str(a), _) => p.string_data = a.iter().map(|s| s.as_bytes().to_vec()).collect(),
        (_, bytes) => p.raw_data = bytes.map(Into::into),
    }
    p
}

/// Decodes a serialized `SequenceProto` of tensors or of maps.
pub fn sequence_from_proto(s: &SequenceProto) -> Result<Value, TensorError> {
    if !s.map_values.is_empty() {
        if !s.tensor_values.is_empty() {
            return Err(TensorError::new("a sequence mixes tensors and maps"));
        }
        let items = s
            .map_values
            .iter()
            .enumerate()
            .map(|(i, m)| map_from_proto(m).map_err(|e| TensorError::new(format!("map {i}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let (key_type, value_type) = items
            .first()
            .map(|m| (m.key_type(), m.value_type()))
            .unwrap_or((DataType::Undefined, DataType::Undefined));
        if let Some((i, m)) = items
            .iter()
            .enumerate()
            .find(|(_, m)| (m.key_type(), m.value_type()) != (key_type, value_type))
        {
            return Err(TensorError::new(format!(
                "map {i} is map({}, {}), map 0 is map({key_type}, {value_type})",
                m.key_type(),
                m.value_type()
            )));
        }
        return Ok(Value::MapSequence {
            key_type,
            value_type,
            items,
        });
    }
    if !s.sequence_values.is_empty() || !s.optional_values.is_empty() {
        return Err(TensorError::new(
            "sequences of sequences or optionals are not supported",
        ));
    }
    let items = s
        .tensor_values
        .iter()
        .map(from_proto)
        .collect::<Result<Vec<_>, _>>()?;
    let elem_type = items
        .first()
        .map(|t| t.dtype())
        .unwrap_or(DataType::Undefined);
    Ok(Value::Sequence { elem_type, items })
}

/// Decodes a `MapProto`: int64 (or other integer) or string keys, and values
/// given as a sequence of scalar tensors (or one tensor of every value).
pub fn map_from_proto(m: &MapProto) -> Result<Map, TensorError> {
    let key_type = DataType::from_code(m.key_type()).unwrap_or(DataType::Undefined);
    let keys = match key_type {
        DataType::String => Tensor::from_vec(
            &[m.string_keys.len()],
            m.string_keys
                .iter()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect(),
        )?,
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Uint8
        | DataType::Uint16
        | DataType::Uint32
        | DataType::Uint64 => Tensor::from_vec(&[m.keys.len()], m.keys.clone())?,
        other => {
            return Err(TensorError::new(format!(
                "map keys must be an integer type or string, got {other}"
            )))
        }
    };
    let Some(vals) = &m.values else {
        return Err(TensorError::new("the map has no values"));
    };
    if !vals.map_values.is_empty() || !vals.sequence_values.is_empty() {
        return Err(TensorError::new(
            "maps whose values are maps or sequences are not supported",
        ));
    }
    let parts = vals
        .tensor_values
        .iter()
        .map(from_proto)
        .collect::<Result<Vec<_>, _>>()?;
    let values = concat_scalars(&parts, keys.len())?;
    Map::new(keys, values)
}

/// One rank-1 tensor of the elements of `parts` (scalars, one per key, or a
/// single tensor holding every value), all of one element type.
fn concat_scalars(parts: &[Tensor], n: usize) -> Result<Tensor, TensorError> {
    let Some(first) = parts.first() else {
        return Tensor::zeros(DataType::Float, &[0]);
    };
    if let Some(t) = parts.iter().find(|t| t.dtype() != first.dtype()) {
        return Err(TensorError::new(format!(
            "map values mix {} and {}",
            first.dtype(),
            t.dtype()
        )));
    }
    let total: usize = parts.iter().map(|t| t.len()).sum();
    if total != n {
        return Err(TensorError::new(format!("{n} keys but {total} values")));
    }
    if let [only] = parts {
        return only.reshape(&[n]);
    }
    concat_flat(parts)
}

pub fn optional_from_proto(o: &OptionalProto) -> Result<Value, TensorError> {
    if let Some(t) = &o.tensor_value {
        return Ok(Value::Optional(Some(Box::new(Value::Tensor(from_proto(
            t,
        )?)))));
    }
    if let Some(s) = &o.sequence_value {
        return Ok(Value::Optional(Some(Box::new(sequence_from_proto(s)?))));
    }
    if o.optional_value.is_some() || o.map_value.is_some() || o.sparse_tensor_value.is_some() {
        return Err(TensorError::new(
            "optional of optional, map or sparse tensor is not supported",
        ));
    }
    Ok(Value::Optional(None))
}

/// What a `.pb` file holds, as the graph's declared type says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PbKind {
    Tensor,
    Sequence,
    Optional,
    Map,
}

/// Decodes a `.pb` test-data file as a tensor, a sequence, an optional or a map.
pub fn value_from_pb_bytes(bytes: &[u8], kind: PbKind) -> Result<Value, TensorError> {
    use prost::Message;
    let bad = |e: prost::DecodeError| TensorError::new(format!("not a valid protobuf: {e}"));
    match kind {
        PbKind::Tensor => Ok(Value::Tensor(from_proto(
            &TensorProto::decode(bytes).map_err(bad)?,
        )?)),
        PbKind::Sequence => sequence_from_proto(&SequenceProto::decode(bytes).map_err(bad)?),
        PbKind::Optional => optional_from_proto(&OptionalProto::decode(bytes).map_err(bad)?),
        PbKind::Map => Ok(Value::Map(map_from_proto(
            &MapProto::decode(bytes).map_err(bad)?,
        )?)),
    }
}

/// The same tensor with its `raw_data` moved into the typed field that
/// `onnx.helper.make_tensor` and the text syntax use for its element type
/// (`float_data` for float and complex64, `double_data`, `int64_data`,
/// `uint64_data` for uint32/uint64, and `int32_data` for every other type:
/// 16-bit floats as their bits, 8-bit floats as their codes, 4- and 2-bit
/// types as one packed byte per entry). A tensor without `raw_data` is
/// returned unchanged.
pub fn raw_to_typed(p: &TensorProto) -> Result<TensorProto, TensorError> {
    use DataType as D;
    let Some(raw) = p.raw_data.as_deref() else {
        return Ok(p.clone());
    };
    let code = p.data_type();
    let dt = DataType::from_code(code).ok_or_else(|| {
        TensorError::new(format!(
            "tensor '{}' has unknown data type {code}",
            p.name()
        ))
    })?;
    let n: usize = shape_of(p)?.iter().product();
    let want = match dt {
        D::Int4 | D::Uint4 | D::Float4E2M1 => n.div_ceil(2),
        D::Int2 | D::Uint2 => n.div_ceil(4),
        _ => match dt.byte_size() {
            Some(size) => n.checked_mul(size).ok_or_else(|| {
                TensorError::new(format!(
                    "tensor '{}' of shape {:?}: its {dt} values need more bytes than 2^64",
                    p.name(),
                    p.dims
                ))
            })?,
            None => {
                return Err(TensorError::new(format!(
                    "tensor '{}': {dt} values cannot be held in raw_data",
                    p.name()
                )))
            }
        },
    };
    check_count(p, raw.len(), want, "raw_data (bytes)")?;
    let mut t = p.clone();
    t.raw_data = None;
    fn le<const N: usize, T>(raw: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        raw.chunks_exact(N)
            .map(|c| f(c.try_into().expect("chunk of N bytes")))
            .collect()
    }
    match dt {
        D::Float | D::Complex64 => t.float_data = le(raw, f32::from_le_bytes),
        D::Double | D::Complex128 => t.double_data = le(raw, f64::from_le_bytes),
        D::Int64 => t.int64_data = le(raw, i64::from_le_bytes),
        D::Uint64 => t.uint64_data = le(raw, u64::from_le_bytes),
        D::Uint32 => t.uint64_data = le(raw, |b| u32::from_le_bytes(b) as u64),
        D::Int32 => t.int32_data = le(raw, i32::from_le_bytes),
        D::Int16 => t.int32_data = le(raw, |b| i16::from_le_bytes(b) as i32),
        D::Uint16 | D::Float16 | D::Bfloat16 => {
            t.int32_data = le(raw, |b| u16::from_le_bytes(b) as i32)
        }
        D::Int8 => t.int32_data = le(raw, |b: [u8; 1]| b[0] as i8 as i32),
        D::Bool => t.int32_data = le(raw, |b: [u8; 1]| (b[0] != 0) as i32),
        // uint8, 8-bit floats, packed 4- and 2-bit types: one byte per entry
        _ => t.int32_data = raw.iter().map(|&b| b as i32).collect(),
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trip_every_numeric_type() {
        for dt in DataType::all() {
            let Ok(t) = Tensor::zeros(dt, &[2, 3]) else {
                continue;
            };
            let p = to_proto(&t, "t");
            let back = from_proto(&p).unwrap();
            assert_eq!(back.dtype(), dt);
            assert_eq!(back.shape(), &[2, 3]);
        }
    }

    #[test]
    fn raw_data_and_typed_fields_hold_the_same_values() {
        for dt in DataType::all() {
            let len = match dt {
                DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => 3,
                DataType::Int2 | DataType::Uint2 => 2,
                _ => match dt.byte_size() {
                    Some(s) => 6 * s,
                    None => continue,
                },
            };
            // bytes below 64 keep every float finite (no NaN != NaN)
            let raw: Vec<u8> = (0..len).map(|i| (i * 7 % 64) as u8).collect();
            let p = TensorProto {
                dims: vec![2, 3],
                data_type: Some(dt.code()),
                raw_data: Some(raw.into()),
                ..Default::default()
            };
            let typed = raw_to_typed(&p).unwrap();
            assert!(typed.raw_data.is_none());
            match from_proto(&p) {
                Ok(a) => assert_eq!(from_proto(&typed).unwrap(), a, "{dt}"),
                Err(_) => assert!(from_proto(&typed).is_err(), "{dt}"),
            }
        }
        let short = TensorProto {
            dims: vec![4],
            data_type: Some(1),
            raw_data: Some(vec![0u8; 15].into()),
            ..Default::default()
        };
        assert!(raw_to_typed(&short).unwrap_err().0.contains("needs 16"));
    }

    #[test]
    fn wrong_count_is_an_error() {
        let p = TensorProto {
            dims: vec![3],
            data_type: Some(1),
            float_data: vec![1.0, 2.0],
            ..Default::default()
        };
        let e = from_proto(&p).unwrap_err();
        assert!(e.0.contains("needs 3 values"), "{e}");
    }

    #[test]
    fn absurd_shape_is_an_error() {
        let p = TensorProto {
            dims: vec![i64::MAX, i64::MAX],
            data_type: Some(1),
            ..Default::default()
        };
        assert!(from_proto(&p).is_err());
    }
}
