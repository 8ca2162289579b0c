//! A tensor from and to its little-endian bytes (the `raw_data` form of
//! ONNX and `.npy`), using loaded bytes in place when it can; the value of
//! one code of a small type; joining tensors. `proto` builds and reads the
//! protobuf messages on top of these.

use super::{DataType, Elem, Tensor};
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

/// The bytes `n` elements of `dt` take in little-endian form: 4- and 2-bit
/// types packed two and four to a byte. `None` for types without a byte
/// form (strings, undefined) and for a count whose bytes overflow.
pub fn raw_byte_len(dt: DataType, n: usize) -> Option<usize> {
    match dt {
        DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => Some(n.div_ceil(2)),
        DataType::Int2 | DataType::Uint2 => Some(n.div_ceil(4)),
        _ => dt.byte_size()?.checked_mul(n),
    }
}

fn from_raw<T, const N: usize>(raw: &[u8], n: usize, f: impl Fn([u8; N]) -> T) -> Vec<T> {
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
        out.extend(raw[at..end].chunks_exact(N).map(|c| {
            let mut b = [0u8; N];
            b.copy_from_slice(c);
            f(b)
        }));
        if raw.len() >= 1 << 16 {
            crate::files::release_mapped_pages(&raw[prev..end]);
        }
        prev = at;
        at = end;
    }
    out
}

/// [`from_raw`] for element types stored as they are in memory: the
/// tensor uses the loaded bytes in place when it can (see
/// [`super::mapped`]), and copies them otherwise.
fn from_raw_plain<T: super::mapped::Plain, const N: usize>(
    raw: &bytes::Bytes,
    n: usize,
    f: impl Fn([u8; N]) -> T,
) -> Vec<T> {
    if std::mem::size_of::<T>() == N {
        if let Some(v) = super::mapped::adopt(raw) {
            return v;
        }
    }
    from_raw(raw, n, f)
}

fn arr<T>(shape: &[usize], v: Vec<T>) -> Result<ArrayD<T>, TensorError> {
    ArrayD::from_shape_vec(IxDyn(shape), v)
        .map_err(|e| TensorError::new(format!("shape {shape:?}: {e}")))
}

impl Tensor {
    /// The tensor of element type `dtype` and `shape` whose elements are
    /// `raw`, little-endian in C order (4- and 2-bit types packed low bits
    /// first). Plain numeric elements use `raw` in place when it is large
    /// and aligned enough (see [`super::mapped`]); others are copied.
    pub fn from_le_bytes(
        dtype: DataType,
        shape: &[usize],
        raw: &bytes::Bytes,
    ) -> Result<Tensor, TensorError> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| TensorError::new(format!("shape {shape:?} is too large")))?;
        let want = raw_byte_len(dtype, n)
            .ok_or_else(|| TensorError::new(format!("element type {dtype} is not supported")))?;
        if raw.len() != want {
            return Err(TensorError::new(format!(
                "{dtype} tensor of shape {shape:?} needs {want} bytes, got {}",
                raw.len()
            )));
        }
        let r = raw;
        Ok(match dtype {
            DataType::Float => Tensor::F32(arr(shape, from_raw_plain(r, n, f32::from_le_bytes))?),
            DataType::Double => Tensor::F64(arr(shape, from_raw_plain(r, n, f64::from_le_bytes))?),
            DataType::Float16 => Tensor::F16(arr(
                shape,
                from_raw_plain(r, n, |b| f16::from_bits(u16::from_le_bytes(b))),
            )?),
            DataType::Bfloat16 => Tensor::BF16(arr(
                shape,
                from_raw_plain(r, n, |b| bf16::from_bits(u16::from_le_bytes(b))),
            )?),
            DataType::Int8 => Tensor::I8(arr(shape, from_raw_plain(r, n, i8::from_le_bytes))?),
            DataType::Int16 => Tensor::I16(arr(shape, from_raw_plain(r, n, i16::from_le_bytes))?),
            DataType::Int32 => Tensor::I32(arr(shape, from_raw_plain(r, n, i32::from_le_bytes))?),
            DataType::Int64 => Tensor::I64(arr(shape, from_raw_plain(r, n, i64::from_le_bytes))?),
            DataType::Uint8 => Tensor::U8(arr(shape, from_raw_plain(r, n, u8::from_le_bytes))?),
            DataType::Uint16 => Tensor::U16(arr(shape, from_raw_plain(r, n, u16::from_le_bytes))?),
            DataType::Uint32 => Tensor::U32(arr(shape, from_raw_plain(r, n, u32::from_le_bytes))?),
            DataType::Uint64 => Tensor::U64(arr(shape, from_raw_plain(r, n, u64::from_le_bytes))?),
            DataType::Bool => Tensor::Bool(arr(shape, from_raw(r, n, |b: [u8; 1]| b[0] != 0))?),
            DataType::Float8E4M3FN
            | DataType::Float8E4M3FNUZ
            | DataType::Float8E5M2
            | DataType::Float8E5M2FNUZ
            | DataType::Float8E8M0 => Tensor::Small {
                dtype,
                data: arr(shape, from_raw(r, n, |b: [u8; 1]| b[0]))?,
            },
            DataType::Int4 | DataType::Uint4 | DataType::Float4E2M1 => Tensor::Small {
                dtype,
                data: arr(shape, unpack(r, n, 4))?,
            },
            DataType::Int2 | DataType::Uint2 => Tensor::Small {
                dtype,
                data: arr(shape, unpack(r, n, 2))?,
            },
            other => {
                return Err(TensorError::new(format!(
                    "element type {other} is not supported"
                )))
            }
        })
    }

    /// The elements as little-endian bytes in C order (4- and 2-bit types
    /// packed low bits first), the inverse of [`Tensor::from_le_bytes`];
    /// `None` for strings, which have no byte form.
    pub fn to_le_bytes(&self) -> Option<Vec<u8>> {
        fn raw<T: Copy, const N: usize>(a: &ArrayD<T>, f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(a.len() * N);
            for &v in a.iter() {
                out.extend_from_slice(&f(v));
            }
            out
        }
        Some(match self {
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
            Tensor::Str(_) => return None,
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
        })
    }
}

/// `n` codes of `bits` bits each (4 or 2), packed low bits first in `bytes`
/// (which holds at least `n * bits / 8` rounded up).
pub fn unpack(bytes: &[u8], n: usize, bits: usize) -> Vec<u8> {
    let per = 8 / bits;
    let mask = ((1u16 << bits) - 1) as u8;
    bytes
        .iter()
        .flat_map(|&b| (0..per).map(move |k| (b >> (k * bits)) & mask))
        .take(n)
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn le_bytes_round_trip_every_numeric_type() {
        for dt in DataType::all() {
            let Ok(t) = Tensor::zeros(dt, &[2, 3]) else {
                continue;
            };
            let Some(raw) = t.to_le_bytes() else {
                assert_eq!(dt, DataType::String);
                continue;
            };
            assert_eq!(Some(raw.len()), raw_byte_len(dt, 6), "{dt}");
            let back = Tensor::from_le_bytes(dt, &[2, 3], &raw.into()).unwrap();
            assert_eq!(back, t, "{dt}");
        }
    }

    #[test]
    fn packed_codes_unpack_low_bits_first() {
        let t = Tensor::from_le_bytes(DataType::Uint4, &[3], &vec![0x21u8, 0x03].into()).unwrap();
        assert_eq!(
            t,
            Tensor::Small {
                dtype: DataType::Uint4,
                data: ndarray::arr1(&[1u8, 2, 3]).into_dyn()
            }
        );
        assert_eq!(t.to_le_bytes(), Some(vec![0x21, 0x03]));
        let t =
            Tensor::from_le_bytes(DataType::Int2, &[5], &vec![0b1110_0100u8, 0b01].into()).unwrap();
        assert_eq!(
            t,
            Tensor::Small {
                dtype: DataType::Int2,
                data: ndarray::arr1(&[0u8, 1, 2, 3, 1]).into_dyn()
            }
        );
    }

    #[test]
    fn wrong_byte_count_is_an_error() {
        let e = Tensor::from_le_bytes(DataType::Float, &[4], &vec![0u8; 15].into()).unwrap_err();
        assert!(e.0.contains("needs 16 bytes, got 15"), "{e}");
        let e = Tensor::from_le_bytes(DataType::Complex64, &[1], &vec![0u8; 8].into()).unwrap_err();
        assert!(e.0.contains("not supported"), "{e}");
        assert!(
            Tensor::from_le_bytes(DataType::Float, &[usize::MAX, 2], &Vec::new().into()).is_err()
        );
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
