//! The tensor type: an ONNX element type over ndarray storage, runtime values
//! (tensors, sequences, optionals), little-endian byte form (what `proto`
//! builds `TensorProto` from), `.npy` files, and numpy-style rendering.

pub mod budget;
mod cast;
mod convert;
mod dtype;
mod key;
pub mod mapped;
mod npy;
mod render;
mod scalar;
mod stats;

pub use convert::{concat_flat, raw_byte_len, unpack, TensorError};
pub use dtype::DataType;
pub use key::Key;
pub use npy::{read_npy, write_npy};
pub use render::{
    format_scalar, quote_str, render_map, render_tensor, render_tensor_with, PrintOptions,
};
pub use scalar::Scalar;
pub use stats::Stats;

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

/// A dense tensor. Each variant holds one element type; the sub-byte and
/// 8-bit float types keep one code per element in `Small`.
#[derive(Clone, Debug, PartialEq)]
pub enum Tensor {
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    F16(ArrayD<f16>),
    BF16(ArrayD<bf16>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
    Bool(ArrayD<bool>),
    Str(ArrayD<String>),
    /// float8 / float4 / int4 / uint4 / int2 / uint2: one raw code per element
    /// (the element's bits, low-aligned; int4/int2 codes are two's complement).
    Small {
        dtype: DataType,
        data: ArrayD<u8>,
    },
}

/// Applies `$body` to the array inside a tensor, whatever its type.
#[macro_export]
macro_rules! with_array {
    ($t:expr, $a:ident => $body:expr) => {
        match $t {
            $crate::tensor::Tensor::F32($a) => $body,
            $crate::tensor::Tensor::F64($a) => $body,
            $crate::tensor::Tensor::F16($a) => $body,
            $crate::tensor::Tensor::BF16($a) => $body,
            $crate::tensor::Tensor::I8($a) => $body,
            $crate::tensor::Tensor::I16($a) => $body,
            $crate::tensor::Tensor::I32($a) => $body,
            $crate::tensor::Tensor::I64($a) => $body,
            $crate::tensor::Tensor::U8($a) => $body,
            $crate::tensor::Tensor::U16($a) => $body,
            $crate::tensor::Tensor::U32($a) => $body,
            $crate::tensor::Tensor::U64($a) => $body,
            $crate::tensor::Tensor::Bool($a) => $body,
            $crate::tensor::Tensor::Str($a) => $body,
            $crate::tensor::Tensor::Small { data: $a, .. } => $body,
        }
    };
}

/// Like [`with_array!`] but rebuilds a tensor of the same type from the
/// array that `$body` returns.
#[macro_export]
macro_rules! map_array {
    ($t:expr, $a:ident => $body:expr) => {
        match $t {
            $crate::tensor::Tensor::F32($a) => $crate::tensor::Tensor::F32($body),
            $crate::tensor::Tensor::F64($a) => $crate::tensor::Tensor::F64($body),
            $crate::tensor::Tensor::F16($a) => $crate::tensor::Tensor::F16($body),
            $crate::tensor::Tensor::BF16($a) => $crate::tensor::Tensor::BF16($body),
            $crate::tensor::Tensor::I8($a) => $crate::tensor::Tensor::I8($body),
            $crate::tensor::Tensor::I16($a) => $crate::tensor::Tensor::I16($body),
            $crate::tensor::Tensor::I32($a) => $crate::tensor::Tensor::I32($body),
            $crate::tensor::Tensor::I64($a) => $crate::tensor::Tensor::I64($body),
            $crate::tensor::Tensor::U8($a) => $crate::tensor::Tensor::U8($body),
            $crate::tensor::Tensor::U16($a) => $crate::tensor::Tensor::U16($body),
            $crate::tensor::Tensor::U32($a) => $crate::tensor::Tensor::U32($body),
            $crate::tensor::Tensor::U64($a) => $crate::tensor::Tensor::U64($body),
            $crate::tensor::Tensor::Bool($a) => $crate::tensor::Tensor::Bool($body),
            $crate::tensor::Tensor::Str($a) => $crate::tensor::Tensor::Str($body),
            $crate::tensor::Tensor::Small { dtype, data: $a } => $crate::tensor::Tensor::Small {
                dtype: *dtype,
                data: $body,
            },
        }
    };
}

/// An element type stored directly in a [`Tensor`] variant.
pub trait Elem: Clone + Default + Send + Sync + 'static {
    const DTYPE: DataType;
    fn wrap(a: ArrayD<Self>) -> Tensor;
    fn view(t: &Tensor) -> Option<&ArrayD<Self>>;
    fn take(t: Tensor) -> Option<ArrayD<Self>>;
}

macro_rules! elem {
    ($ty:ty, $var:ident, $dt:ident) => {
        impl Elem for $ty {
            const DTYPE: DataType = DataType::$dt;
            fn wrap(a: ArrayD<Self>) -> Tensor {
                Tensor::$var(a)
            }
            fn view(t: &Tensor) -> Option<&ArrayD<Self>> {
                match t {
                    Tensor::$var(a) => Some(a),
                    _ => None,
                }
            }
            fn take(t: Tensor) -> Option<ArrayD<Self>> {
                match t {
                    Tensor::$var(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}
elem!(f32, F32, Float);
elem!(f64, F64, Double);
elem!(f16, F16, Float16);
elem!(bf16, BF16, Bfloat16);
elem!(i8, I8, Int8);
elem!(i16, I16, Int16);
elem!(i32, I32, Int32);
elem!(i64, I64, Int64);
elem!(u8, U8, Uint8);
elem!(u16, U16, Uint16);
elem!(u32, U32, Uint32);
elem!(u64, U64, Uint64);
elem!(bool, Bool, Bool);
elem!(String, Str, String);

/// `f` of every element in logical (row-major) order: over the slice when
/// the array is in standard layout (ndarray's element iterator over `IxDyn`
/// arrays costs several nanoseconds per element).
pub(crate) fn mapped<T, U>(a: &ArrayD<T>, f: impl Fn(&T) -> U) -> Vec<U> {
    match a.as_slice() {
        Some(s) => s.iter().map(f).collect(),
        None => a.iter().map(f).collect(),
    }
}

impl Tensor {
    /// The element type.
    pub fn dtype(&self) -> DataType {
        match self {
            Tensor::F32(_) => DataType::Float,
            Tensor::F64(_) => DataType::Double,
            Tensor::F16(_) => DataType::Float16,
            Tensor::BF16(_) => DataType::Bfloat16,
            Tensor::I8(_) => DataType::Int8,
            Tensor::I16(_) => DataType::Int16,
            Tensor::I32(_) => DataType::Int32,
            Tensor::I64(_) => DataType::Int64,
            Tensor::U8(_) => DataType::Uint8,
            Tensor::U16(_) => DataType::Uint16,
            Tensor::U32(_) => DataType::Uint32,
            Tensor::U64(_) => DataType::Uint64,
            Tensor::Bool(_) => DataType::Bool,
            Tensor::Str(_) => DataType::String,
            Tensor::Small { dtype, .. } => *dtype,
        }
    }

    pub fn shape(&self) -> &[usize] {
        with_array!(self, a => a.shape())
    }

    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_array!(self, a => a.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A tensor of zeros (empty strings, false) of a type and shape.
    pub fn zeros(dtype: DataType, shape: &[usize]) -> Result<Tensor, TensorError> {
        budget::check(shape, dtype.alloc_bytes())?;
        let sh = IxDyn(shape);
        Ok(match dtype {
            DataType::Float => Tensor::F32(ArrayD::zeros(sh)),
            DataType::Double => Tensor::F64(ArrayD::zeros(sh)),
            DataType::Float16 => Tensor::F16(ArrayD::from_elem(sh, f16::ZERO)),
            DataType::Bfloat16 => Tensor::BF16(ArrayD::from_elem(sh, bf16::ZERO)),
            DataType::Int8 => Tensor::I8(ArrayD::zeros(sh)),
            DataType::Int16 => Tensor::I16(ArrayD::zeros(sh)),
            DataType::Int32 => Tensor::I32(ArrayD::zeros(sh)),
            DataType::Int64 => Tensor::I64(ArrayD::zeros(sh)),
            DataType::Uint8 => Tensor::U8(ArrayD::zeros(sh)),
            DataType::Uint16 => Tensor::U16(ArrayD::zeros(sh)),
            DataType::Uint32 => Tensor::U32(ArrayD::zeros(sh)),
            DataType::Uint64 => Tensor::U64(ArrayD::zeros(sh)),
            DataType::Bool => Tensor::Bool(ArrayD::from_elem(sh, false)),
            DataType::String => Tensor::Str(ArrayD::from_elem(sh, String::new())),
            DataType::Float8E4M3FN
            | DataType::Float8E4M3FNUZ
            | DataType::Float8E5M2
            | DataType::Float8E5M2FNUZ
            | DataType::Float8E8M0
            | DataType::Float4E2M1
            | DataType::Int4
            | DataType::Uint4
            | DataType::Int2
            | DataType::Uint2 => Tensor::Small {
                dtype,
                data: ArrayD::zeros(sh),
            },
            other => {
                return Err(TensorError::new(format!(
                    "element type {other} is not supported"
                )))
            }
        })
    }

    /// The bytes the elements take in memory: the element size times the
    /// count (one byte per sub-byte or 8-bit float element, as stored); a
    /// string counts its text plus its header.
    pub fn bytes(&self) -> usize {
        match self {
            Tensor::Str(a) => a
                .iter()
                .map(|s| s.len() + std::mem::size_of::<String>())
                .sum(),
            Tensor::Small { data, .. } => data.len(),
            t => t.len() * t.dtype().byte_size().unwrap_or(1),
        }
    }

    /// A rank-0 tensor.
    /// Whether the elements are the loaded model's bytes, used in place
    /// (see [`mapped`]) rather than an owned copy on the heap.
    pub fn is_mapped(&self) -> bool {
        with_array!(self, a => mapped::is_adopted(a.as_ptr().cast::<u8>()))
    }

    pub fn scalar<T: Elem>(v: T) -> Tensor {
        T::wrap(ArrayD::from_elem(IxDyn(&[]), v))
    }

    /// A tensor from a flat vector and a shape.
    pub fn from_vec<T: Elem>(shape: &[usize], v: Vec<T>) -> Result<Tensor, TensorError> {
        let n: usize = shape.iter().product();
        if n != v.len() {
            return Err(TensorError::new(format!(
                "{} values do not fill shape {:?}",
                v.len(),
                shape
            )));
        }
        ArrayD::from_shape_vec(IxDyn(shape), v)
            .map(T::wrap)
            .map_err(|e| TensorError::new(e.to_string()))
    }

    /// The elements as f64 in logical (row-major) order; `None` for strings.
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        Some(match self {
            Tensor::F32(a) => mapped(a, |&v| v as f64),
            Tensor::F64(a) => mapped(a, |&v| v),
            Tensor::F16(a) => mapped(a, |v| v.to_f64()),
            Tensor::BF16(a) => mapped(a, |v| v.to_f64()),
            Tensor::I8(a) => mapped(a, |&v| v as f64),
            Tensor::I16(a) => mapped(a, |&v| v as f64),
            Tensor::I32(a) => mapped(a, |&v| v as f64),
            Tensor::I64(a) => mapped(a, |&v| v as f64),
            Tensor::U8(a) => mapped(a, |&v| v as f64),
            Tensor::U16(a) => mapped(a, |&v| v as f64),
            Tensor::U32(a) => mapped(a, |&v| v as f64),
            Tensor::U64(a) => mapped(a, |&v| v as f64),
            Tensor::Bool(a) => mapped(a, |&v| if v { 1.0 } else { 0.0 }),
            Tensor::Str(_) => return None,
            Tensor::Small { dtype, data } => data
                .iter()
                .map(|&c| convert::small_to_f64(*dtype, c))
                .collect(),
        })
    }

    /// Integer elements (any integer or bool type) as i64.
    pub fn to_i64_vec(&self) -> Result<Vec<i64>, TensorError> {
        Ok(match self {
            Tensor::I8(a) => mapped(a, |&v| v as i64),
            Tensor::I16(a) => mapped(a, |&v| v as i64),
            Tensor::I32(a) => mapped(a, |&v| v as i64),
            Tensor::I64(a) => mapped(a, |&v| v),
            Tensor::U8(a) => mapped(a, |&v| v as i64),
            Tensor::U16(a) => mapped(a, |&v| v as i64),
            Tensor::U32(a) => mapped(a, |&v| v as i64),
            Tensor::U64(a) => mapped(a, |&v| v as i64),
            Tensor::Bool(a) => mapped(a, |&v| v as i64),
            other => {
                return Err(TensorError::new(format!(
                    "expected an integer tensor, got {}",
                    other.dtype()
                )))
            }
        })
    }

    /// String elements, in order.
    pub fn string_values(&self) -> Option<Vec<String>> {
        match self {
            Tensor::Str(a) => Some(a.iter().cloned().collect()),
            _ => None,
        }
    }

    /// The same data with another shape of the same element count.
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor, TensorError> {
        let n: usize = shape.iter().product();
        if n != self.len() {
            return Err(TensorError::new(format!(
                "cannot reshape {} elements of shape {:?} to {:?}",
                self.len(),
                self.shape(),
                shape
            )));
        }
        Ok(map_array!(self, a => {
            // a row-major buffer is copied whole; any other layout is read
            // in logical order
            let flat: Vec<_> = match a.as_slice() {
                Some(s) => s.to_vec(),
                None => a.iter().cloned().collect(),
            };
            ArrayD::from_shape_vec(IxDyn(shape), flat).expect("element count checked")
        }))
    }

    /// A copy in standard (row-major, contiguous) layout.
    pub fn to_standard(&self) -> Tensor {
        map_array!(self, a => a.as_standard_layout().into_owned())
    }
}

/// A map value (the ai.onnx.ml domain's `map(K, V)`): int64 or string keys
/// and one value per key, as two rank-1 tensors of one length, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    keys: Tensor,
    values: Tensor,
}

impl Map {
    /// A map of `keys` (int64 or string, rank 1) to `values` (rank 1, as
    /// many as keys); keys must be distinct.
    pub fn new(keys: Tensor, values: Tensor) -> Result<Map, TensorError> {
        if !matches!(keys.dtype(), DataType::Int64 | DataType::String) {
            return Err(TensorError::new(format!(
                "map keys must be int64 or string, got {}",
                keys.dtype()
            )));
        }
        if keys.rank() != 1 || values.rank() != 1 || keys.len() != values.len() {
            return Err(TensorError::new(format!(
                "a map needs as many values as keys, got keys {:?} and values {:?}",
                keys.shape(),
                values.shape()
            )));
        }
        let distinct = match &keys {
            Tensor::I64(k) => k.iter().collect::<std::collections::HashSet<_>>().len(),
            Tensor::Str(k) => k.iter().collect::<std::collections::HashSet<_>>().len(),
            _ => keys.len(),
        };
        if distinct != keys.len() {
            return Err(TensorError::new(format!(
                "map keys must be distinct: {} keys, {distinct} distinct",
                keys.len()
            )));
        }
        Ok(Map { keys, values })
    }

    pub fn keys(&self) -> &Tensor {
        &self.keys
    }

    pub fn values(&self) -> &Tensor {
        &self.values
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn key_type(&self) -> DataType {
        self.keys.dtype()
    }

    pub fn value_type(&self) -> DataType {
        self.values.dtype()
    }
}

/// Values by name, as a run holds them: hashed with FxHash, not SipHash
/// (names come from the model, not from an adversary choosing collisions;
/// SLANet's 501 Loop steps spent 4.6% of a run in SipHash).
pub type ValueMap = std::collections::HashMap<String, Value, rustc_hash::FxBuildHasher>;

/// A runtime value: a tensor, a sequence of tensors, an optional, a map, or
/// a sequence of maps (what ZipMap outputs).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Tensor(Tensor),
    /// A sequence; `elem_type` is kept so that an empty sequence still has a type.
    Sequence {
        elem_type: DataType,
        items: Vec<Tensor>,
    },
    /// An optional value: `None` is the empty optional.
    Optional(Option<Box<Value>>),
    Map(Map),
    /// A sequence of maps; the key and value types are kept so that an
    /// empty sequence still has a type.
    MapSequence {
        key_type: DataType,
        value_type: DataType,
        items: Vec<Map>,
    },
}

impl Value {
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    pub fn into_tensor(self) -> Option<Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The ONNX element type of the value (of its elements for a sequence).
    pub fn dtype(&self) -> DataType {
        match self {
            Value::Tensor(t) => t.dtype(),
            Value::Sequence { elem_type, .. } => *elem_type,
            Value::Optional(Some(v)) => v.dtype(),
            Value::Optional(None) => DataType::Undefined,
            Value::Map(m) => m.value_type(),
            Value::MapSequence { value_type, .. } => *value_type,
        }
    }

    /// The bytes the value's elements take in memory (a string counts its
    /// text plus its header; containers add up their items).
    pub fn bytes(&self) -> usize {
        match self {
            Value::Tensor(t) => t.bytes(),
            Value::Sequence { items, .. } => items.iter().map(Tensor::bytes).sum(),
            Value::Optional(Some(v)) => v.bytes(),
            Value::Optional(None) => 0,
            Value::Map(m) => m.keys().bytes() + m.values().bytes(),
            Value::MapSequence { items, .. } => items
                .iter()
                .map(|m| m.keys().bytes() + m.values().bytes())
                .sum(),
        }
    }

    /// A short description for messages: `float[2,4]`, `seq(float)`.
    pub fn describe(&self) -> String {
        match self {
            Value::Tensor(t) => format!("{}{:?}", t.dtype(), t.shape()),
            Value::Sequence { elem_type, items } => {
                format!("seq({elem_type}) of {} tensors", items.len())
            }
            Value::Optional(Some(v)) => format!("optional({})", v.describe()),
            Value::Optional(None) => "optional(none)".to_string(),
            Value::Map(m) => format!(
                "map({}, {}) of {} entries",
                m.key_type(),
                m.value_type(),
                m.len()
            ),
            Value::MapSequence {
                key_type,
                value_type,
                items,
            } => format!("seq(map({key_type}, {value_type})) of {} maps", items.len()),
        }
    }
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Tensor(t)
    }
}
