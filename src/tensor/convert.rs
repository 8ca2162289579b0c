//! Conversion between [`Tensor`] and `TensorProto` (raw and typed fields),
//! and the backend-test containers (SequenceProto, OptionalProto).

use super::{DataType, Elem, Map, Tensor, Value};
use crate::proto::{MapProto, OptionalProto, SequenceProto, TensorProto};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use std::fmt;

/// A tensor that cannot be built or converted, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorError(pub String);

impl From<super::budget::OverBudget> for TensorError {
    fn from(e: super::budget::OverBudget) -> Self {
        TensorError(e.to_string())
    }
}

impl TensorError {
    pub fn new(msg: impl Into<String>) -> Self {
        TensorError(msg.into())
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TensorError {}

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

fn from_raw<T, const N: usize>(
    p: &TensorProto,
    raw: &[u8],
    n: usize,
    f: impl Fn([u8; N]) -> T,
) -> Result<Vec<T>, TensorError> {
    check_count(p, raw.len(), n * N, "raw_data (bytes)")?;
    // copied block by block; a block of a mapped file is given back to the
    // system once copied (with the block before it, for the page they share),
    // so a weight is not held twice while it is converted or afterwards
    const BLOCK: usize = 1 << 23;
    let step = BLOCK / N * N;
    let mut out = Vec::with_capacity(n);
    let mut prev = 0;
    let mut at = 0;
    while at < raw.len() {
        let end = (at + step).min(raw.len());
        out.extend(
            raw[at..end]
                .chunks_exact(N)
                .map(|c| f(c.try_into().expect("chunk of N bytes"))),
        );
        if raw.len() >= 1 << 16 {
            crate::files::release_mapped_pages(&raw[prev..end]);
        }
        prev = at;
        at = end;
    }
    Ok(out)
}

/// [`from_raw`] for element types stored as they are in memory: the
/// tensor uses the loaded bytes in place when it can (see
/// [`super::mapped`]), and copies them otherwise.
fn from_raw_plain<T: super::mapped::Plain, const N: usize>(
    p: &TensorProto,
    raw: &bytes::Bytes,
    n: usize,
    f: impl Fn([u8; N]) -> T,
) -> Result<Vec<T>, TensorError> {
    check_count(p, raw.len(), n * N, "raw_data (bytes)")?;
    if std::mem::size_of::<T>() == N {
        if let Some(v) = super::mapped::adopt(raw) {
            return Ok(v);
        }
    }
    from_raw(p, raw, n, f)
}

fn arr<T>(shape: &[usize], v: Vec<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(IxDyn(shape), v).expect("element count checked")
}

/// Decodes a `TensorProto` whose data is inline (`raw_data` or typed
/// fields). External data must have been resolved into `raw_data` first
/// (see `proto::resolve_external_data`).
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
    let raw = p.raw_data.as_ref();
    macro_rules! typed {
        ($field:ident, $conv:expr) => {{
            check_count(p, p.$field.len(), n, stringify!($field))?;
            p.$field.iter().map($conv).collect::<Vec<_>>()
        }};
    }
    Ok(match dt {
        DataType::Float => Tensor::F32(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, f32::from_le_bytes)?,
                None => typed!(float_data, |&v| v),
            },
        )),
        DataType::Double => Tensor::F64(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, f64::from_le_bytes)?,
                None => typed!(double_data, |&v| v),
            },
        )),
        DataType::Float16 => Tensor::F16(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, |b| f16::from_bits(u16::from_le_bytes(b)))?,
                None => typed!(int32_data, |&v| f16::from_bits(v as u16)),
            },
        )),
        DataType::Bfloat16 => Tensor::BF16(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, |b| bf16::from_bits(u16::from_le_bytes(b)))?,
                None => typed!(int32_data, |&v| bf16::from_bits(v as u16)),
            },
        )),
        DataType::Int8 => Tensor::I8(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, i8::from_le_bytes)?,
                None => typed!(int32_data, |&v| v as i8),
            },
        )),
        DataType::Int16 => Tensor::I16(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, i16::from_le_bytes)?,
                None => typed!(int32_data, |&v| v as i16),
            },
        )),
        DataType::Int32 => Tensor::I32(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, i32::from_le_bytes)?,
                None => typed!(int32_data, |&v| v),
            },
        )),
        DataType::Int64 => Tensor::I64(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, i64::from_le_bytes)?,
                None => typed!(int64_data, |&v| v),
            },
        )),
        DataType::Uint8 => Tensor::U8(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, u8::from_le_bytes)?,
                None => typed!(int32_data, |&v| v as u8),
            },
        )),
        DataType::Uint16 => Tensor::U16(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, u16::from_le_bytes)?,
                None => typed!(int32_data, |&v| v as u16),
            },
        )),
        DataType::Uint32 => Tensor::U32(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, u32::from_le_bytes)?,
                None => typed!(uint64_data, |&v| v as u32),
            },
        )),
        DataType::Uint64 => Tensor::U64(arr(
            &shape,
            match raw {
                Some(r) => from_raw_plain(p, r, n, u64::from_le_bytes)?,
                None => typed!(uint64_data, |&v| v),
            },
        )),
        DataType::Bool => Tensor::Bool(arr(
            &shape,
            match raw {
                Some(r) => from_raw(p, r, n, |b: [u8; 1]| b[0] != 0)?,
                None => typed!(int32_data, |&v| v != 0),
            },
        )),
        DataType::String => {
            check_count(p, p.string_data.len(), n, "string_data")?;
            Tensor::Str(arr(
                &shape,
                p.string_data
                    .iter()
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect(),
            ))
        }
        DataType::Float8E4M3FN
        | DataType::Float8E4M3FNUZ
        | DataType::Float8E5M2
        | DataType::Float8E5M2FNUZ
        | DataType::Float8E8M0 => Tensor::Small {
            dtype: dt,
            data: arr(
                &shape,
                match raw {
                    Some(r) => from_raw(p, r, n, |b: [u8; 1]| b[0])?,
                    None => typed!(int32_data, |&v| v as u8),
                },
            ),
        },
        DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => {
            let bytes: Vec<u8> = match raw {
                Some(r) => r.to_vec(),
                None => p.int32_data.iter().map(|&v| v as u8).collect(),
            };
            check_count(p, bytes.len(), n.div_ceil(2), "packed 4-bit data (bytes)")?;
            let codes = (0..n)
                .map(|i| (bytes[i / 2] >> ((i % 2) * 4)) & 0x0f)
                .collect();
            Tensor::Small {
                dtype: dt,
                data: arr(&shape, codes),
            }
        }
        DataType::Int2 | DataType::Uint2 => {
            let bytes: Vec<u8> = match raw {
                Some(r) => r.to_vec(),
                None => p.int32_data.iter().map(|&v| v as u8).collect(),
            };
            check_count(p, bytes.len(), n.div_ceil(4), "packed 2-bit data (bytes)")?;
            let codes = (0..n)
                .map(|i| (bytes[i / 4] >> ((i % 4) * 2)) & 0x03)
                .collect();
            Tensor::Small {
                dtype: dt,
                data: arr(&shape, codes),
            }
        }
        other => {
            return Err(TensorError::new(format!(
                "tensor '{}': element type {other} is not supported",
                p.name()
            )))
        }
    })
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
    fn raw<T: Copy, const N: usize>(a: &ArrayD<T>, f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        let mut out = Vec::with_capacity(a.len() * N);
        for &v in a.iter() {
            out.extend_from_slice(&f(v));
        }
        out
    }
    let bytes = match t {
        Tensor::F32(a) => raw(a, f32::to_le_bytes),
        Tensor::F64(a) => raw(a, f64::to_le_bytes),
        Tensor::F16(a) => raw(a, |v| v.to_bits().to_le_bytes()),
        Tensor::BF16(a) => raw(a, |v| v.to_bits().to_le_bytes()),
        Tensor::I8(a) => raw(a, i8::to_le_bytes),
        Tensor::I16(a) => raw(a, i16::to_le_bytes),
        Tensor::I32(a) => raw(a, i32::to_le_bytes),
        Tensor::I64(a) => raw(a, i64::to_le_bytes),
        Tensor::U8(a) => raw(a, u8::to_le_bytes),
        Tensor::U16(a) => raw(a, u16::to_le_bytes),
        Tensor::U32(a) => raw(a, u32::to_le_bytes),
        Tensor::U64(a) => raw(a, u64::to_le_bytes),
        Tensor::Bool(a) => raw(a, |v| [v as u8]),
        Tensor::Str(a) => {
            p.string_data = a.iter().map(|s| s.as_bytes().to_vec()).collect();
            return p;
        }
        Tensor::Small { dtype, data } => match dtype {
            DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => {
                let codes: Vec<u8> = data.iter().copied().collect();
                codes
                    .chunks(2)
                    .map(|c| (c[0] & 0x0f) | (c.get(1).copied().unwrap_or(0) << 4))
                    .collect()
            }
            DataType::Int2 | DataType::Uint2 => {
                let codes: Vec<u8> = data.iter().copied().collect();
                codes
                    .chunks(4)
                    .map(|c| {
                        c.iter()
                            .enumerate()
                            .fold(0u8, |acc, (i, &v)| acc | ((v & 3) << (2 * i)))
                    })
                    .collect()
            }
            _ => data.iter().copied().collect(),
        },
    };
    p.raw_data = Some(bytes.into());
    p
}

/// The value of one code of a small type (float8, float4, int4, int2...).
pub fn small_to_f64(dt: DataType, c: u8) -> f64 {
    match dt {
        DataType::Int4 => (((c << 4) as i8) >> 4) as f64,
        DataType::Uint4 => (c & 0x0f) as f64,
        DataType::Int2 => (((c << 6) as i8) >> 6) as f64,
        DataType::Uint2 => (c & 0x03) as f64,
        DataType::Float4E2M1 => minifloat(c & 0x0f, 2, 1, 1, false, MiniNan::None),
        DataType::Float8E4M3FN => minifloat(c, 4, 3, 7, false, MiniNan::AllOnes),
        DataType::Float8E4M3FNUZ => minifloat(c, 4, 3, 8, false, MiniNan::NegZero),
        DataType::Float8E5M2 => minifloat(c, 5, 2, 15, true, MiniNan::Ieee),
        DataType::Float8E5M2FNUZ => minifloat(c, 5, 2, 16, false, MiniNan::NegZero),
        DataType::Float8E8M0 => {
            if c == 0xff {
                f64::NAN
            } else {
                2f64.powi(c as i32 - 127)
            }
        }
        _ => f64::NAN,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum MiniNan {
    None,
    /// exponent and mantissa all ones (E4M3FN)
    AllOnes,
    /// the "negative zero" code 0x80 (FNUZ types)
    NegZero,
    /// exponent all ones: inf with zero mantissa, NaN otherwise
    Ieee,
}

fn minifloat(c: u8, ebits: u32, mbits: u32, bias: i32, _inf: bool, nan: MiniNan) -> f64 {
    let total = 1 + ebits + mbits;
    let sign = (c >> (total - 1)) & 1;
    let e = ((c >> mbits) & ((1 << ebits) - 1) as u8) as i32;
    let m = (c & ((1 << mbits) - 1) as u8) as i32;
    let emax = (1 << ebits) - 1;
    match nan {
        MiniNan::AllOnes if e == emax && m == (1 << mbits) - 1 => return f64::NAN,
        MiniNan::NegZero if sign == 1 && e == 0 && m == 0 => return f64::NAN,
        MiniNan::Ieee if e == emax => {
            return if m == 0 {
                if sign == 1 {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            } else {
                f64::NAN
            }
        }
        _ => {}
    }
    let mag = if e == 0 {
        m as f64 * 2f64.powi(1 - bias - mbits as i32)
    } else {
        (1.0 + m as f64 / (1 << mbits) as f64) * 2f64.powi(e - bias)
    };
    if sign == 1 {
        -mag
    } else {
        mag
    }
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

/// The elements of `parts` (all of one element type, any shapes), in order,
/// as one rank-1 tensor.
pub fn concat_flat(parts: &[Tensor]) -> Result<Tensor, TensorError> {
    fn join<T: Elem>(parts: &[Tensor]) -> Option<Tensor> {
        let mut flat = Vec::new();
        for p in parts {
            flat.extend(T::view(p)?.iter().cloned());
        }
        let n = flat.len();
        Tensor::from_vec(&[n], flat).ok()
    }
    let Some(first) = parts.first() else {
        return Err(TensorError::new("nothing to concatenate"));
    };
    if let Some(t) = parts.iter().find(|t| t.dtype() != first.dtype()) {
        return Err(TensorError::new(format!(
            "cannot join {} and {} elements",
            first.dtype(),
            t.dtype()
        )));
    }
    let joined = match first {
        Tensor::F32(_) => join::<f32>(parts),
        Tensor::F64(_) => join::<f64>(parts),
        Tensor::F16(_) => join::<half::f16>(parts),
        Tensor::BF16(_) => join::<half::bf16>(parts),
        Tensor::I8(_) => join::<i8>(parts),
        Tensor::I16(_) => join::<i16>(parts),
        Tensor::I32(_) => join::<i32>(parts),
        Tensor::I64(_) => join::<i64>(parts),
        Tensor::U8(_) => join::<u8>(parts),
        Tensor::U16(_) => join::<u16>(parts),
        Tensor::U32(_) => join::<u32>(parts),
        Tensor::U64(_) => join::<u64>(parts),
        Tensor::Bool(_) => join::<bool>(parts),
        Tensor::Str(_) => join::<String>(parts),
        Tensor::Small { .. } => None,
    };
    joined.ok_or_else(|| TensorError::new(format!("cannot join {} elements", first.dtype())))
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

    #[test]
    fn float8_decoding() {
        assert_eq!(small_to_f64(DataType::Float8E4M3FN, 0x38), 1.0);
        assert_eq!(small_to_f64(DataType::Float8E4M3FN, 0x7e), 448.0);
        assert!(small_to_f64(DataType::Float8E4M3FN, 0x7f).is_nan());
        assert_eq!(small_to_f64(DataType::Float8E5M2, 0x3c), 1.0);
        assert_eq!(small_to_f64(DataType::Float8E5M2, 0x7c), f64::INFINITY);
        assert_eq!(small_to_f64(DataType::Int4, 0x0f), -1.0);
        assert_eq!(small_to_f64(DataType::Float4E2M1, 0x7), 6.0);
    }
}
