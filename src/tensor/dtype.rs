//! ONNX element types: numbers, names and sizes.

use std::fmt;

/// An ONNX `TensorProto.DataType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    Undefined,
    Float,
    Uint8,
    Int8,
    Uint16,
    Int16,
    Int32,
    Int64,
    String,
    Bool,
    Float16,
    Double,
    Uint32,
    Uint64,
    Complex64,
    Complex128,
    Bfloat16,
    Float8E4M3FN,
    Float8E4M3FNUZ,
    Float8E5M2,
    Float8E5M2FNUZ,
    Uint4,
    Int4,
    Float4E2M1,
    Float8E8M0,
    Uint2,
    Int2,
}

/// (type, ONNX number, ONNX text name, numpy alias)
const TABLE: &[(DataType, i32, &str, &str)] = &[
    (DataType::Undefined, 0, "undefined", ""),
    (DataType::Float, 1, "float", "float32"),
    (DataType::Uint8, 2, "uint8", ""),
    (DataType::Int8, 3, "int8", ""),
    (DataType::Uint16, 4, "uint16", ""),
    (DataType::Int16, 5, "int16", ""),
    (DataType::Int32, 6, "int32", ""),
    (DataType::Int64, 7, "int64", ""),
    (DataType::String, 8, "string", "str"),
    (DataType::Bool, 9, "bool", ""),
    (DataType::Float16, 10, "float16", "half"),
    (DataType::Double, 11, "double", "float64"),
    (DataType::Uint32, 12, "uint32", ""),
    (DataType::Uint64, 13, "uint64", ""),
    (DataType::Complex64, 14, "complex64", ""),
    (DataType::Complex128, 15, "complex128", ""),
    (DataType::Bfloat16, 16, "bfloat16", ""),
    (DataType::Float8E4M3FN, 17, "float8e4m3fn", ""),
    (DataType::Float8E4M3FNUZ, 18, "float8e4m3fnuz", ""),
    (DataType::Float8E5M2, 19, "float8e5m2", ""),
    (DataType::Float8E5M2FNUZ, 20, "float8e5m2fnuz", ""),
    (DataType::Uint4, 21, "uint4", ""),
    (DataType::Int4, 22, "int4", ""),
    (DataType::Float4E2M1, 23, "float4e2m1", ""),
    (DataType::Float8E8M0, 24, "float8e8m0", ""),
    (DataType::Uint2, 25, "uint2", ""),
    (DataType::Int2, 26, "int2", ""),
];

impl DataType {
    /// Bytes one element takes in memory here (sub-byte and 8-bit float
    /// types keep one byte per element; a string counts its `String` header).
    pub fn alloc_bytes(self) -> usize {
        match self {
            DataType::Double | DataType::Int64 | DataType::Uint64 | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            DataType::Float | DataType::Int32 | DataType::Uint32 => 4,
            DataType::Float16 | DataType::Bfloat16 | DataType::Int16 | DataType::Uint16 => 2,
            DataType::String => std::mem::size_of::<String>(),
            _ => 1,
        }
    }

    /// Every defined type (without `Undefined`).
    pub fn all() -> impl Iterator<Item = DataType> {
        TABLE.iter().skip(1).map(|r| r.0)
    }

    /// The ONNX `TensorProto.DataType` number.
    pub fn code(self) -> i32 {
        TABLE.iter().find(|r| r.0 == self).map(|r| r.1).unwrap_or(0)
    }

    /// The type of an ONNX number, `None` when the number is not a type.
    pub fn from_code(code: i32) -> Option<DataType> {
        TABLE.iter().find(|r| r.1 == code).map(|r| r.0)
    }

    /// The ONNX text-syntax name (`float`, `int64`, ...).
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|r| r.0 == self)
            .map(|r| r.2)
            .unwrap_or("undefined")
    }

    /// A type from its ONNX name or numpy alias (`float32`, `float64`).
    pub fn from_name(name: &str) -> Option<DataType> {
        let lower = name.to_ascii_lowercase();
        TABLE
            .iter()
            .find(|r| r.2 == lower || (!r.3.is_empty() && r.3 == lower))
            .map(|r| r.0)
            .filter(|t| *t != DataType::Undefined)
    }

    /// The name of a type number, or `type(N)` for an unknown number.
    pub fn name_of_code(code: i32) -> String {
        match DataType::from_code(code) {
            Some(t) => t.name().to_string(),
            None => format!("type({code})"),
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
        ) || self.is_float8()
            || self == DataType::Float4E2M1
    }

    /// The float types kernels compute in: float, double, float16, bfloat16
    /// (not float8 or float4, which hold values only).
    pub fn is_standard_float(self) -> bool {
        matches!(
            self,
            DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
        )
    }

    pub fn is_float8(self) -> bool {
        matches!(
            self,
            DataType::Float8E4M3FN
                | DataType::Float8E4M3FNUZ
                | DataType::Float8E5M2
                | DataType::Float8E5M2FNUZ
                | DataType::Float8E8M0
        )
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Uint8
                | DataType::Uint16
                | DataType::Uint32
                | DataType::Uint64
                | DataType::Int4
                | DataType::Uint4
                | DataType::Int2
                | DataType::Uint2
        )
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Int4
                | DataType::Int2
        )
    }

    /// Bytes per element in `raw_data`, `None` for strings and sub-byte types.
    pub fn byte_size(self) -> Option<usize> {
        use DataType::*;
        Some(match self {
            Float | Int32 | Uint32 => 4,
            Double | Int64 | Uint64 | Complex64 => 8,
            Complex128 => 16,
            Float16 | Bfloat16 | Int16 | Uint16 => 2,
            Int8 | Uint8 | Bool | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ
            | Float8E8M0 => 1,
            _ => return None,
        })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
