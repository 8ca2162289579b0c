//! Numeric element types: the `Num` and `IntOps` traits every arithmetic
//! kernel computes with, and the macros that dispatch on a tensor's element
//! type.

use crate::tensor::Elem;
use half::{bf16, f16};

/// Arithmetic on every numeric element type: wrapping for integers (never
/// an overflow panic), IEEE for floats; integer division by zero is `None`.
pub trait Num: Elem + Copy + PartialOrd {
    const IS_FLOAT: bool;
    fn zero() -> Self;
    fn one() -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Option<Self>;
    fn to_f64(self) -> f64;
    /// Converts from f64 (saturating for integers, NaN → 0).
    fn from_f64(v: f64) -> Self;
}

macro_rules! num_int {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const IS_FLOAT: bool = false;
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn div(self, o: Self) -> Option<Self> { if o == 0 { None } else { Some(self.wrapping_div(o)) } }
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}

num_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! num_float {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const IS_FLOAT: bool = true;
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn add(self, o: Self) -> Self { self + o }
            fn sub(self, o: Self) -> Self { self - o }
            fn mul(self, o: Self) -> Self { self * o }
            fn div(self, o: Self) -> Option<Self> { Some(self / o) }
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}

num_float!(f32, f64);

macro_rules! num_half {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const IS_FLOAT: bool = true;
            fn zero() -> Self { <$t>::ZERO }
            fn one() -> Self { <$t>::ONE }
            fn add(self, o: Self) -> Self { self + o }
            fn sub(self, o: Self) -> Self { self - o }
            fn mul(self, o: Self) -> Self { self * o }
            fn div(self, o: Self) -> Option<Self> { Some(self / o) }
            fn to_f64(self) -> f64 { <$t>::to_f64(self) }
            fn from_f64(v: f64) -> Self { <$t>::from_f64(v) }
        }
    )*};
}

num_half!(f16, bf16);

/// Calls `$f::<T>($args)` for the numeric element type of `$t`, or
/// evaluates `$else` for non-numeric types.
#[macro_export]
macro_rules! dispatch_num {
    ($t:expr, $f:ident ( $($args:expr),* ), $else:expr) => {
        match $t.dtype() {
            $crate::tensor::DataType::Float => $f::<f32>($($args),*),
            $crate::tensor::DataType::Double => $f::<f64>($($args),*),
            $crate::tensor::DataType::Float16 => $f::<half::f16>($($args),*),
            $crate::tensor::DataType::Bfloat16 => $f::<half::bf16>($($args),*),
            $crate::tensor::DataType::Int8 => $f::<i8>($($args),*),
            $crate::tensor::DataType::Int16 => $f::<i16>($($args),*),
            $crate::tensor::DataType::Int32 => $f::<i32>($($args),*),
            $crate::tensor::DataType::Int64 => $f::<i64>($($args),*),
            $crate::tensor::DataType::Uint8 => $f::<u8>($($args),*),
            $crate::tensor::DataType::Uint16 => $f::<u16>($($args),*),
            $crate::tensor::DataType::Uint32 => $f::<u32>($($args),*),
            $crate::tensor::DataType::Uint64 => $f::<u64>($($args),*),
            _ => $else,
        }
    };
}

/// Calls `$f::<T>($args)` for the float element types (computed through
/// f64 for the halves), or evaluates `$else`.
macro_rules! ew_dispatch_float {
    ($t:expr, $f:ident ( $($args:expr),* ), $else:expr) => {
        match $t.dtype() {
            $crate::tensor::DataType::Float => $f::<f32>($($args),*),
            $crate::tensor::DataType::Double => $f::<f64>($($args),*),
            $crate::tensor::DataType::Float16 => $f::<half::f16>($($args),*),
            $crate::tensor::DataType::Bfloat16 => $f::<half::bf16>($($args),*),
            _ => $else,
        }
    };
}

pub(crate) use ew_dispatch_float;

/// Calls `$f::<T>($args)` for the integer element types, or evaluates `$else`.
macro_rules! ew_dispatch_int {
    ($t:expr, $f:ident ( $($args:expr),* ), $else:expr) => {
        match $t.dtype() {
            $crate::tensor::DataType::Int8 => $f::<i8>($($args),*),
            $crate::tensor::DataType::Int16 => $f::<i16>($($args),*),
            $crate::tensor::DataType::Int32 => $f::<i32>($($args),*),
            $crate::tensor::DataType::Int64 => $f::<i64>($($args),*),
            $crate::tensor::DataType::Uint8 => $f::<u8>($($args),*),
            $crate::tensor::DataType::Uint16 => $f::<u16>($($args),*),
            $crate::tensor::DataType::Uint32 => $f::<u32>($($args),*),
            $crate::tensor::DataType::Uint64 => $f::<u64>($($args),*),
            _ => $else,
        }
    };
}

pub(crate) use ew_dispatch_int;

/// Matches two tensors of the same variant, binding their arrays.
macro_rules! same_pair {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr, $else:expr) => {
        match ($a, $b) {
            ($crate::tensor::Tensor::F32($x), $crate::tensor::Tensor::F32($y)) => $body,
            ($crate::tensor::Tensor::F64($x), $crate::tensor::Tensor::F64($y)) => $body,
            ($crate::tensor::Tensor::F16($x), $crate::tensor::Tensor::F16($y)) => $body,
            ($crate::tensor::Tensor::BF16($x), $crate::tensor::Tensor::BF16($y)) => $body,
            ($crate::tensor::Tensor::I8($x), $crate::tensor::Tensor::I8($y)) => $body,
            ($crate::tensor::Tensor::I16($x), $crate::tensor::Tensor::I16($y)) => $body,
            ($crate::tensor::Tensor::I32($x), $crate::tensor::Tensor::I32($y)) => $body,
            ($crate::tensor::Tensor::I64($x), $crate::tensor::Tensor::I64($y)) => $body,
            ($crate::tensor::Tensor::U8($x), $crate::tensor::Tensor::U8($y)) => $body,
            ($crate::tensor::Tensor::U16($x), $crate::tensor::Tensor::U16($y)) => $body,
            ($crate::tensor::Tensor::U32($x), $crate::tensor::Tensor::U32($y)) => $body,
            ($crate::tensor::Tensor::U64($x), $crate::tensor::Tensor::U64($y)) => $body,
            ($crate::tensor::Tensor::Bool($x), $crate::tensor::Tensor::Bool($y)) => $body,
            ($crate::tensor::Tensor::Str($x), $crate::tensor::Tensor::Str($y)) => $body,
            _ => $else,
        }
    };
}

pub(crate) use same_pair;

/// Integer-only operations (bit manipulation, remainders), wrapping and
/// never panicking.
pub trait IntOps: Num {
    const BITS: u32;
    const SIGNED: bool;
    fn to_i128(self) -> i128;
    /// Truncating remainder (sign of the dividend); `None` for a zero divisor.
    fn rem_trunc(self, o: Self) -> Option<Self>;
    fn bit_and(self, o: Self) -> Self;
    fn bit_or(self, o: Self) -> Self;
    fn bit_xor(self, o: Self) -> Self;
    fn bit_not(self) -> Self;
    /// Shifts by `n` bits (0 for `n >= BITS` on the left; sign fill on the right).
    fn shl_by(self, n: u32) -> Self;
    fn shr_by(self, n: u32) -> Self;
}

macro_rules! int_ops {
    ($($t:ty : $signed:expr),*) => {$(
        impl IntOps for $t {
            const BITS: u32 = <$t>::BITS;
            const SIGNED: bool = $signed;
            fn to_i128(self) -> i128 { self as i128 }
            fn rem_trunc(self, o: Self) -> Option<Self> {
                if o == 0 { None } else { Some(self.wrapping_rem(o)) }
            }
            fn bit_and(self, o: Self) -> Self { self & o }
            fn bit_or(self, o: Self) -> Self { self | o }
            fn bit_xor(self, o: Self) -> Self { self ^ o }
            fn bit_not(self) -> Self { !self }
            fn shl_by(self, n: u32) -> Self { self.checked_shl(n).unwrap_or(0) }
            fn shr_by(self, n: u32) -> Self {
                match self.checked_shr(n) {
                    Some(v) => v,
                    None => if self < (0 as $t) { self.wrapping_shr(<$t>::BITS - 1) } else { 0 },
                }
            }
        }
    )*};
}

int_ops!(i8: true, i16: true, i32: true, i64: true, u8: false, u16: false, u32: false, u64: false);

/// `v` bounded below by `lo` and above by `hi`, either of which may be
/// absent (ONNX Clip: a lower bound above the upper one gives the upper;
/// NaN stays NaN).
#[inline(always)]
pub fn clip_value<T: PartialOrd + Copy>(v: T, lo: Option<T>, hi: Option<T>) -> T {
    let mut r = v;
    if let Some(l) = lo {
        if r < l {
            r = l;
        }
    }
    if let Some(h) = hi {
        if r > h {
            r = h;
        }
    }
    r
}
