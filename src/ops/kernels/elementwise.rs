//! Elementwise kernels: arithmetic with numpy broadcasting, activations,
//! identity.

use super::{typed, zip2};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Elem, Tensor, Value};
use half::{bf16, f16};
use ndarray::ArrayD;
use std::cell::Cell;

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

/// The four arithmetic operators.
#[derive(Clone, Copy, Debug)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

fn arith_typed<T: Num>(op: Arith, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    let div_zero = Cell::new(false);
    let out = match op {
        Arith::Add => zip2(x, y, |p, q| p.add(q))?,
        Arith::Sub => zip2(x, y, |p, q| p.sub(q))?,
        Arith::Mul => zip2(x, y, |p, q| p.mul(q))?,
        Arith::Div => zip2(x, y, |p, q| {
            p.div(q).unwrap_or_else(|| {
                div_zero.set(true);
                T::zero()
            })
        })?,
    };
    if div_zero.get() {
        bail!("integer division by zero");
    }
    Ok(T::wrap(out))
}

/// `a op b` with numpy broadcasting; both operands of one numeric type.
pub fn arith(op: Arith, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    if a.dtype() != b.dtype() {
        bail!(
            "operands must have the same element type, got {} and {}",
            a.dtype(),
            b.dtype()
        );
    }
    dispatch_num!(
        a,
        arith_typed(op, a, b),
        bail!("{op:?} does not accept {}", a.dtype())
    )
}

fn arith_kernel(op: Arith) -> Kernel {
    Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        Ok(vec![Value::Tensor(arith(op, a, b)?)])
    })
}

pub fn add(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(arith_kernel(Arith::Add))
}

pub fn sub(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(arith_kernel(Arith::Sub))
}

pub fn mul(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(arith_kernel(Arith::Mul))
}

pub fn div(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(arith_kernel(Arith::Div))
}

fn relu_typed<T: Num>(t: &Tensor) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(t, "X")?;
    let z = T::zero();
    Ok(T::wrap(a.mapv(|v| if v > z { v } else { z })))
}

pub fn relu(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = dispatch_num!(
            x,
            relu_typed(x),
            bail!("Relu does not accept {}", x.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

pub fn identity(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| match ins.first().copied().flatten() {
        Some(v) => Ok(vec![v.clone()]),
        None => bail!("input 0 is missing"),
    }))
}

// ---------------------------------------------------------------------------
// Shared helpers of the elementwise family.

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

/// Matches two tensors of the same variant, binding their arrays.
macro_rules! same_pair {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr, $else:expr) => {
        match ($a, $b) {
            (Tensor::F32($x), Tensor::F32($y)) => $body,
            (Tensor::F64($x), Tensor::F64($y)) => $body,
            (Tensor::F16($x), Tensor::F16($y)) => $body,
            (Tensor::BF16($x), Tensor::BF16($y)) => $body,
            (Tensor::I8($x), Tensor::I8($y)) => $body,
            (Tensor::I16($x), Tensor::I16($y)) => $body,
            (Tensor::I32($x), Tensor::I32($y)) => $body,
            (Tensor::I64($x), Tensor::I64($y)) => $body,
            (Tensor::U8($x), Tensor::U8($y)) => $body,
            (Tensor::U16($x), Tensor::U16($y)) => $body,
            (Tensor::U32($x), Tensor::U32($y)) => $body,
            (Tensor::U64($x), Tensor::U64($y)) => $body,
            (Tensor::Bool($x), Tensor::Bool($y)) => $body,
            (Tensor::Str($x), Tensor::Str($y)) => $body,
            _ => $else,
        }
    };
}

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

/// Applies `f` to every element of a float tensor (computing through f64).
/// Elements per parallel chunk of a large f32 map.
const MAP_CHUNK: usize = 1 << 15;

/// `f` over every element of a float tensor (computed in f64, rounded once).
/// `f` of every element of a contiguous f32 buffer, in one inlined loop;
/// large buffers are split over the rayon pool.
fn map_f32_slice(src: &[f32], f: impl Fn(f32) -> f32 + Sync) -> Vec<f32> {
    let mut out = vec![0f32; src.len()];
    let run = |o: &mut [f32], s: &[f32]| {
        for (o, &v) in o.iter_mut().zip(s) {
            *o = f(v);
        }
    };
    if src.len() >= 2 * MAP_CHUNK && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        out.par_chunks_mut(MAP_CHUNK)
            .zip(src.par_chunks(MAP_CHUNK))
            .for_each(|(o, s)| run(o, s));
    } else {
        run(&mut out, src);
    }
    out
}

/// Monomorphic in `f`, so the loop over a contiguous f32 buffer inlines it;
/// large buffers are split over the rayon pool.
pub fn map_float<F: Fn(f64) -> f64 + Sync>(
    name: &str,
    x: &Tensor,
    f: F,
) -> Result<Tensor, KernelError> {
    Ok(match x {
        Tensor::F32(a) => match a.as_slice() {
            Some(src) => {
                let out = map_f32_slice(src, |v| f(v as f64) as f32);
                Tensor::F32(ArrayD::from_shape_vec(a.raw_dim(), out)?)
            }
            None => Tensor::F32(a.mapv(|v| f(v as f64) as f32)),
        },
        Tensor::F64(a) => Tensor::F64(a.mapv(&f)),
        Tensor::F16(a) => Tensor::F16(a.mapv(|v| f16::from_f64(f(v.to_f64())))),
        Tensor::BF16(a) => Tensor::BF16(a.mapv(|v| bf16::from_f64(f(v.to_f64())))),
        _ => bail!("{name} does not accept {} (float types only)", x.dtype()),
    })
}

fn float_kernel(name: &'static str, f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Kernel {
    Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        Ok(vec![Value::Tensor(map_float(name, x, &f)?)])
    })
}

fn num_map<T: Num>(x: &Tensor, f: &dyn Fn(T) -> T) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "X")?;
    Ok(T::wrap(a.mapv(f)))
}

fn abs_of<T: Num>(v: T) -> T {
    if v < T::zero() {
        T::zero().sub(v)
    } else {
        v
    }
}

fn neg_of<T: Num>(v: T) -> T {
    T::zero().sub(v)
}

fn sign_of<T: Num>(v: T) -> T {
    if v > T::zero() {
        T::one()
    } else if v < T::zero() {
        T::zero().sub(T::one())
    } else {
        v
    }
}

fn abs_t<T: Num>(x: &Tensor) -> Result<Tensor, KernelError> {
    num_map::<T>(x, &abs_of)
}
fn neg_t<T: Num>(x: &Tensor) -> Result<Tensor, KernelError> {
    num_map::<T>(x, &neg_of)
}
fn sign_t<T: Num>(x: &Tensor) -> Result<Tensor, KernelError> {
    num_map::<T>(x, &sign_of)
}

pub fn abs(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = dispatch_num!(x, abs_t(x), bail!("Abs does not accept {}", x.dtype()))?;
        Ok(vec![Value::Tensor(y)])
    }))
}

pub fn neg(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        if matches!(
            x.dtype(),
            crate::tensor::DataType::Uint8
                | crate::tensor::DataType::Uint16
                | crate::tensor::DataType::Uint32
                | crate::tensor::DataType::Uint64
        ) {
            bail!("Neg does not accept {} (signed types only)", x.dtype());
        }
        let y = dispatch_num!(x, neg_t(x), bail!("Neg does not accept {}", x.dtype()))?;
        Ok(vec![Value::Tensor(y)])
    }))
}

pub fn sign(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = dispatch_num!(x, sign_t(x), bail!("Sign does not accept {}", x.dtype()))?;
        Ok(vec![Value::Tensor(y)])
    }))
}

/// The error function, accurate to about 1e-15 (series near zero,
/// continued fraction for the tail).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 3.0 {
        // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
        let x2 = a * a;
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() && n < 200.0 {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else if a > 27.0 {
        1.0
    } else {
        // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
        let mut f = a;
        for k in (1..=60).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// The error function to float32 accuracy (relative error about 1e-7), for
/// float32/float16/bfloat16 tensors: a short Taylor series below 0.5, and
/// above it the Chebyshev-fitted `erfc` of Numerical Recipes (`erfcc`,
/// fractional error below 1.2e-7), one `exp` per element where [`erf`]'s
/// series takes dozens of terms.
pub fn erf_single(x: f64) -> f64 {
    let z = x.abs();
    if z.is_nan() {
        return x;
    }
    if z < 0.5 {
        // erf(x) = 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
        let x2 = x * x;
        let p = 1.0
            + x2 * (-1.0 / 3.0
                + x2 * (1.0 / 10.0 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 - x2 / 1320.0))));
        return std::f64::consts::FRAC_2_SQRT_PI * x * p;
    }
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = 1.0 - t * poly.exp();
    if x < 0.0 {
        -r
    } else {
        r
    }
}

macro_rules! float_ops {
    ($($name:ident => $f:expr),* $(,)?) => {$(
        pub fn $name(_: &NodeInfo) -> Result<Kernel, KernelError> {
            Ok(float_kernel(stringify!($name), $f))
        }
    )*};
}

float_ops!(
    reciprocal => |v| 1.0 / v,
    floor => f64::floor,
    ceil => f64::ceil,
    round => f64::round_ties_even,
    sqrt => f64::sqrt,
    exp => f64::exp,
    log => f64::ln,
    sin => f64::sin,
    cos => f64::cos,
    tan => f64::tan,
    asin => f64::asin,
    acos => f64::acos,
    atan => f64::atan,
    sinh => f64::sinh,
    cosh => f64::cosh,
    asinh => f64::asinh,
    acosh => f64::acosh,
    atanh => f64::atanh,
    erf_op => erf,
    mish => |v| v * softplus_f(v).tanh(),
    softplus => softplus_f,
    softsign => |v| v / (1.0 + v.abs()),
);

/// A float kernel whose float32 inputs are computed in float32 by `f32f`
/// (a contiguous array); other types and layouts go through `f` in f64.
fn float_kernel_f32(
    name: &'static str,
    f32f: impl Fn(f32) -> f32 + Send + Sync + 'static,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Kernel {
    Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if let Tensor::F32(a) = x {
            if let Some(src) = a.as_slice() {
                let out = map_f32_slice(src, &f32f);
                return Ok(vec![Value::Tensor(Tensor::F32(ArrayD::from_shape_vec(
                    a.raw_dim(),
                    out,
                )?))]);
            }
        }
        Ok(vec![Value::Tensor(map_float(name, x, &f)?)])
    })
}

pub fn sigmoid(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(float_kernel_f32(
        "sigmoid",
        super::exp_f32::sigmoid,
        sigmoid_f,
    ))
}

pub fn tanh(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(float_kernel_f32("tanh", super::exp_f32::tanh, f64::tanh))
}

pub fn swish(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(float_kernel("Swish", move |v| v * sigmoid_f(alpha * v)))
}

pub(crate) fn sigmoid_f(v: f64) -> f64 {
    if v >= 0.0 {
        1.0 / (1.0 + (-v).exp())
    } else {
        let e = v.exp();
        e / (1.0 + e)
    }
}

fn softplus_f(v: f64) -> f64 {
    if v > 0.0 {
        v + (-v).exp().ln_1p()
    } else {
        v.exp().ln_1p()
    }
}

/// The spec: x * max(0, min(1, alpha * x + beta)), alpha = 1/6, beta = 0.5
/// (float32 inputs in float32, as the attributes are).
pub fn hard_swish(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(float_kernel_f32(
        "HardSwish",
        |v: f32| v * (v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0),
        |v: f64| v * (v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0),
    ))
}

pub fn hard_sigmoid(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 0.2);
    let beta = info.attrs.float_or("beta", 0.5);
    let (a64, b64) = (alpha as f64, beta as f64);
    Ok(float_kernel_f32(
        "HardSigmoid",
        move |v: f32| (alpha * v + beta).clamp(0.0, 1.0),
        move |v: f64| (a64 * v + b64).clamp(0.0, 1.0),
    ))
}

pub fn leaky_relu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 0.01);
    let a64 = alpha as f64;
    Ok(float_kernel_f32(
        "LeakyRelu",
        move |v: f32| if v < 0.0 { alpha * v } else { v },
        move |v: f64| if v < 0.0 { a64 * v } else { v },
    ))
}

pub fn elu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(float_kernel("Elu", move |v| {
        if v < 0.0 {
            alpha * v.exp_m1()
        } else {
            v
        }
    }))
}

pub fn selu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.673_263_2) as f64;
    let gamma = info.attrs.float_or("gamma", 1.050_701) as f64;
    Ok(float_kernel("Selu", move |v| {
        if v <= 0.0 {
            gamma * alpha * v.exp_m1()
        } else {
            gamma * v
        }
    }))
}

pub fn celu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    if alpha == 0.0 {
        bail!("Celu: alpha must not be 0");
    }
    Ok(float_kernel("Celu", move |v| {
        v.max(0.0) + (alpha * (v / alpha).exp_m1()).min(0.0)
    }))
}

pub fn gelu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let approx = info.attrs.string_or("approximate", "none");
    match approx.as_str() {
        "none" => Ok(Box::new(|_, ins| {
            let x = tensor_in(ins, 0)?;
            if let Tensor::F32(a) = x {
                if let Some(src) = a.as_slice() {
                    let out = map_f32_slice(src, super::exp_f32::gelu);
                    let y = ArrayD::from_shape_vec(a.raw_dim(), out)?;
                    return Ok(vec![Value::Tensor(Tensor::F32(y))]);
                }
            }
            let y = if matches!(x, Tensor::F64(_)) {
                map_float("Gelu", x, |v| {
                    0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))
                })?
            } else {
                // float32 and narrower: float32 accuracy is all the output keeps
                map_float("Gelu", x, |v| {
                    0.5 * v * (1.0 + erf_single(v / std::f64::consts::SQRT_2))
                })?
            };
            Ok(vec![Value::Tensor(y)])
        })),
        "tanh" => Ok(float_kernel("Gelu", |v| {
            let k = (2.0 / std::f64::consts::PI).sqrt();
            0.5 * v * (1.0 + (k * (v + 0.044715 * v * v * v)).tanh())
        })),
        other => bail!("Gelu: unknown approximate '{other}' (none or tanh)"),
    }
}

pub fn thresholded_relu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(float_kernel("ThresholdedRelu", move |v| {
        if v > alpha {
            v
        } else {
            0.0
        }
    }))
}

pub fn is_nan(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("IsNaN does not accept {}", x.dtype());
        }
        let v = x.to_f64_vec().unwrap_or_default();
        let out: Vec<bool> = v.iter().map(|f| f.is_nan()).collect();
        Ok(vec![Value::Tensor(bool::wrap(super::array(
            x.shape(),
            out,
        )?))])
    }))
}

pub fn is_inf(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let neg = info.attrs.int_or("detect_negative", 1) != 0;
    let pos = info.attrs.int_or("detect_positive", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("IsInf does not accept {}", x.dtype());
        }
        let v = x.to_f64_vec().unwrap_or_default();
        let out: Vec<bool> = v
            .iter()
            .map(|f| (pos && *f == f64::INFINITY) || (neg && *f == f64::NEG_INFINITY))
            .collect();
        Ok(vec![Value::Tensor(bool::wrap(super::array(
            x.shape(),
            out,
        )?))])
    }))
}

// ---------------------------------------------------------------------------
// Binary operators.

/// A numeric tensor's values as an f64 array of the same shape.
pub fn as_f64_array(t: &Tensor, what: &str) -> Result<ArrayD<f64>, KernelError> {
    match t.to_f64_vec() {
        Some(v) => super::array(t.shape(), v),
        None => bail!("{what} must be numeric, got {}", t.dtype()),
    }
}

/// Integer power by squaring, wrapping; `None` for a negative exponent.
fn int_pow<T: Num>(base: T, mut e: i128) -> Option<T> {
    if e < 0 {
        return None;
    }
    let mut acc = T::one();
    let mut b = base;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.mul(b);
        }
        e >>= 1;
        if e > 0 {
            b = b.mul(b);
        }
    }
    Some(acc)
}

fn pow_t<T: Num>(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "X")?;
    let exp_int = b.dtype().is_int();
    let y = as_f64_array(b, "Y")?;
    let out = zip2(x, &y, |p, q| {
        if !T::IS_FLOAT && exp_int {
            if let Some(v) = int_pow(p, q as i128) {
                return v;
            }
        }
        T::from_f64(p.to_f64().powf(q))
    })?;
    Ok(T::wrap(out))
}

pub fn pow(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        if b.dtype() == crate::tensor::DataType::String
            || b.dtype() == crate::tensor::DataType::Bool
        {
            bail!("Pow: exponent must be numeric, got {}", b.dtype());
        }
        let y = dispatch_num!(a, pow_t(a, b), bail!("Pow does not accept {}", a.dtype()))?;
        Ok(vec![Value::Tensor(y)])
    }))
}

/// Python-style float modulo (sign of the divisor).
fn float_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else if r == 0.0 {
        // the result takes the divisor's sign
        0.0f64.copysign(b)
    } else {
        r
    }
}

fn mod_int<T: IntOps>(a: &Tensor, b: &Tensor, fmod: bool) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    let zero_div = Cell::new(false);
    let out = zip2(x, y, |p, q| match p.rem_trunc(q) {
        None => {
            zero_div.set(true);
            T::zero()
        }
        Some(r) => {
            if !fmod && r != T::zero() && ((r < T::zero()) != (q < T::zero())) {
                r.add(q)
            } else {
                r
            }
        }
    })?;
    if zero_div.get() {
        bail!("Mod: integer division by zero");
    }
    Ok(T::wrap(out))
}

fn mod_float<T: Num>(a: &Tensor, b: &Tensor, fmod: bool) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    let out = zip2(x, y, |p, q| {
        let (p, q) = (p.to_f64(), q.to_f64());
        T::from_f64(if fmod { p % q } else { float_mod(p, q) })
    })?;
    Ok(T::wrap(out))
}

pub fn modulo(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let fmod = info.attrs.int_or("fmod", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        if a.dtype() != b.dtype() {
            bail!(
                "Mod: operands must have the same type, got {} and {}",
                a.dtype(),
                b.dtype()
            );
        }
        let y = if a.dtype().is_float() {
            ew_dispatch_float!(
                a,
                mod_float(a, b, fmod),
                bail!("Mod does not accept {}", a.dtype())
            )?
        } else {
            ew_dispatch_int!(
                a,
                mod_int(a, b, fmod),
                bail!("Mod does not accept {}", a.dtype())
            )?
        };
        Ok(vec![Value::Tensor(y)])
    }))
}

#[derive(Clone, Copy, Debug)]
enum BitOp {
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

fn bit_t<T: IntOps>(op: BitOp, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "A")?;
    let y: &ArrayD<T> = typed(b, "B")?;
    // a negative shift amount (an unsigned huge one in two's complement)
    // shifts every bit out, like an amount >= the width
    let amount = |q: T| -> u32 {
        let v = q.to_i128();
        if v < 0 {
            1024
        } else {
            v.min(1024) as u32
        }
    };
    let out = match op {
        BitOp::And => zip2(x, y, |p, q| p.bit_and(q))?,
        BitOp::Or => zip2(x, y, |p, q| p.bit_or(q))?,
        BitOp::Xor => zip2(x, y, |p, q| p.bit_xor(q))?,
        BitOp::Shl => zip2(x, y, |p, q| p.shl_by(amount(q)))?,
        BitOp::Shr => zip2(x, y, |p, q| p.shr_by(amount(q)))?,
    };
    Ok(T::wrap(out))
}

fn bit_kernel(op: BitOp) -> Kernel {
    Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        if a.dtype() != b.dtype() {
            bail!(
                "operands must have the same type, got {} and {}",
                a.dtype(),
                b.dtype()
            );
        }
        let y = ew_dispatch_int!(
            a,
            bit_t(op, a, b),
            bail!("{op:?} does not accept {} (integer types only)", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    })
}

pub fn bitwise_and(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(bit_kernel(BitOp::And))
}
pub fn bitwise_or(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(bit_kernel(BitOp::Or))
}
pub fn bitwise_xor(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(bit_kernel(BitOp::Xor))
}

pub fn bit_shift(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dir = info.attrs.string_or("direction", "");
    match dir.to_ascii_uppercase().as_str() {
        "LEFT" => Ok(bit_kernel(BitOp::Shl)),
        "RIGHT" => Ok(bit_kernel(BitOp::Shr)),
        _ => bail!("BitShift: direction must be LEFT or RIGHT, got '{dir}'"),
    }
}

fn bit_not_t<T: IntOps>(x: &Tensor) -> Result<Tensor, KernelError> {
    num_map::<T>(x, &|v: T| v.bit_not())
}

pub fn bitwise_not(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = ew_dispatch_int!(
            x,
            bit_not_t(x),
            bail!("BitwiseNot does not accept {}", x.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

fn prelu_t<T: Num>(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let x: &ArrayD<T> = typed(a, "X")?;
    let s: &ArrayD<T> = typed(b, "slope")?;
    let out = zip2(x, s, |p, q| if p < T::zero() { p.mul(q) } else { p })?;
    if out.shape() != x.shape() {
        bail!(
            "PRelu: slope {:?} does not broadcast to X {:?}",
            s.shape(),
            x.shape()
        );
    }
    Ok(T::wrap(out))
}

pub fn prelu(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        let y = dispatch_num!(
            a,
            prelu_t(a, b),
            bail!("PRelu does not accept {}", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

// ---------------------------------------------------------------------------
// Comparisons and logic.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

// the bool arms of `same_pair!` compare booleans; only Equal reaches them
#[allow(clippy::bool_comparison)]
fn compare(op: Cmp, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    if op != Cmp::Eq
        && matches!(
            a.dtype(),
            crate::tensor::DataType::String | crate::tensor::DataType::Bool
        )
    {
        bail!("{op:?} does not accept {}", a.dtype());
    }
    let out = same_pair!(a, b, x, y => match op {
        Cmp::Eq => zip2(x, y, |p, q| p == q)?,
        Cmp::Lt => zip2(x, y, |p, q| p < q)?,
        Cmp::Le => zip2(x, y, |p, q| p <= q)?,
        Cmp::Gt => zip2(x, y, |p, q| p > q)?,
        Cmp::Ge => zip2(x, y, |p, q| p >= q)?,
    }, bail!("{op:?}: operands must have the same supported type, got {} and {}", a.dtype(), b.dtype()));
    Ok(Tensor::Bool(out))
}

fn cmp_kernel(op: Cmp) -> Kernel {
    Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        Ok(vec![Value::Tensor(compare(op, a, b)?)])
    })
}

pub fn equal(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(cmp_kernel(Cmp::Eq))
}
pub fn less(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(cmp_kernel(Cmp::Lt))
}
pub fn less_or_equal(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(cmp_kernel(Cmp::Le))
}
pub fn greater(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(cmp_kernel(Cmp::Gt))
}
pub fn greater_or_equal(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(cmp_kernel(Cmp::Ge))
}

fn logic_kernel(name: &'static str, f: fn(bool, bool) -> bool) -> Kernel {
    Box::new(move |_, ins| {
        let a: &ArrayD<bool> = typed(tensor_in(ins, 0)?, name)?;
        let b: &ArrayD<bool> = typed(tensor_in(ins, 1)?, name)?;
        Ok(vec![Value::Tensor(Tensor::Bool(zip2(a, b, f)?))])
    })
}

pub fn and(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(logic_kernel("And", |p, q| p && q))
}
pub fn or(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(logic_kernel("Or", |p, q| p || q))
}
pub fn xor(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(logic_kernel("Xor", |p, q| p != q))
}

pub fn not(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let a: &ArrayD<bool> = typed(tensor_in(ins, 0)?, "Not input")?;
        Ok(vec![Value::Tensor(Tensor::Bool(a.mapv(|v| !v)))])
    }))
}

pub fn where_op(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let c: &ArrayD<bool> = typed(tensor_in(ins, 0)?, "condition")?;
        let a = tensor_in(ins, 1)?;
        let b = tensor_in(ins, 2)?;
        let out = same_pair!(a, b, x, y => Elem::wrap(super::zip3(c, x, y, |k, p, q| if k { p } else { q })?),
            bail!("Where: X and Y must have the same type, got {} and {}", a.dtype(), b.dtype()));
        Ok(vec![Value::Tensor(out)])
    }))
}

// ---------------------------------------------------------------------------
// Variadic and clipping.

/// The larger of two values; NaN wins (numpy semantics).
#[allow(clippy::eq_op)]
fn max_of<T: Num>(a: T, b: T) -> T {
    if a != a {
        a
    } else if b != b || b > a {
        b
    } else {
        a
    }
}

/// The smaller of two values; NaN wins.
#[allow(clippy::eq_op)]
fn min_of<T: Num>(a: T, b: T) -> T {
    if a != a {
        a
    } else if b != b || b < a {
        b
    } else {
        a
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fold {
    Min,
    Max,
    Sum,
    Mean,
}

fn fold_t<T: Num>(op: Fold, ts: &[&Tensor]) -> Result<Tensor, KernelError> {
    let mut acc: ArrayD<T> = typed::<T>(ts[0], "input 0")?.clone();
    for (i, t) in ts.iter().enumerate().skip(1) {
        let x: &ArrayD<T> = typed(t, &format!("input {i}"))?;
        acc = match op {
            Fold::Min => zip2(&acc, x, min_of)?,
            Fold::Max => zip2(&acc, x, max_of)?,
            Fold::Sum | Fold::Mean => zip2(&acc, x, |p, q| p.add(q))?,
        };
    }
    if op == Fold::Mean {
        let n = T::from_f64(ts.len() as f64);
        acc.mapv_inplace(|v| v.div(n).unwrap_or(v));
    }
    Ok(T::wrap(acc))
}

fn fold_kernel(op: Fold) -> Kernel {
    Box::new(move |_, ins| {
        let mut ts = Vec::with_capacity(ins.len());
        for i in 0..ins.len() {
            ts.push(tensor_in(ins, i)?);
        }
        if ts.is_empty() {
            bail!("{op:?} needs at least one input");
        }
        let first = ts[0];
        // the common case: float32 operands of one shape, summed in place
        if matches!(op, Fold::Sum) && ts.len() > 1 {
            if let Tensor::F32(a0) = first {
                let same = ts
                    .iter()
                    .all(|t| matches!(t, Tensor::F32(a) if a.shape() == a0.shape()));
                if same {
                    let mut acc = a0.as_standard_layout().into_owned();
                    for t in &ts[1..] {
                        if let Tensor::F32(a) = t {
                            acc += a;
                        }
                    }
                    return Ok(vec![Value::Tensor(Tensor::F32(acc))]);
                }
            }
        }
        if matches!(op, Fold::Sum | Fold::Mean) && !first.dtype().is_float() {
            bail!(
                "{op:?} does not accept {} (float types only)",
                first.dtype()
            );
        }
        let y = dispatch_num!(
            first,
            fold_t(op, &ts),
            bail!("{op:?} does not accept {}", first.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    })
}

pub fn min(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(fold_kernel(Fold::Min))
}
pub fn max(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(fold_kernel(Fold::Max))
}
pub fn sum(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(fold_kernel(Fold::Sum))
}
pub fn mean(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(fold_kernel(Fold::Mean))
}

fn clip_bound<T: Num>(t: Option<&Tensor>, what: &str) -> Result<Option<T>, KernelError> {
    match t {
        None => Ok(None),
        Some(t) => {
            let a: &ArrayD<T> = typed(t, what)?;
            if a.len() != 1 {
                bail!("Clip: {what} must be a scalar, got shape {:?}", a.shape());
            }
            Ok(a.iter().next().copied())
        }
    }
}

fn clip_t<T: Num>(
    x: &Tensor,
    lo: Option<&Tensor>,
    hi: Option<&Tensor>,
    attr: (Option<f64>, Option<f64>),
) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "input")?;
    let lo = match attr.0 {
        Some(v) => Some(T::from_f64(v)),
        None => clip_bound::<T>(lo, "min")?,
    };
    let hi = match attr.1 {
        Some(v) => Some(T::from_f64(v)),
        None => clip_bound::<T>(hi, "max")?,
    };
    Ok(T::wrap(a.mapv(|v| {
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
    })))
}

pub fn clip(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attr = if info.opset < 11 {
        (
            Some(info.attrs.float_or("min", f32::MIN) as f64),
            Some(info.attrs.float_or("max", f32::MAX) as f64),
        )
    } else {
        (None, None)
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let lo = super::super::kernel::opt_tensor_in(ins, 1)?;
        let hi = super::super::kernel::opt_tensor_in(ins, 2)?;
        let y = dispatch_num!(
            x,
            clip_t(x, lo, hi, attr),
            bail!("Clip does not accept {}", x.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Attrs;
    use crate::proto::{AttributeProto, NodeProto};

    fn t<T: Elem>(shape: &[usize], v: Vec<T>) -> Tensor {
        Tensor::from_vec(shape, v).unwrap()
    }

    fn run(
        op: &str,
        attrs: Vec<AttributeProto>,
        opset: i64,
        ins: &[Option<Tensor>],
    ) -> Result<Tensor, KernelError> {
        let node = NodeProto {
            op_type: Some(op.into()),
            attribute: attrs,
            ..Default::default()
        };
        let compile = |_: &crate::proto::GraphProto| -> Result<std::sync::Arc<dyn crate::ops::kernel::Subgraph>, KernelError> {
            Err(KernelError::new("no subgraphs"))
        };
        let info = NodeInfo {
            node: &node,
            opset,
            attrs: Attrs::new(&node),
            compile: &compile,
        };
        let def = crate::ops::lookup("", op, opset).expect("op in table");
        let kernel = (def.kernel)(&info)?;
        let vals: Vec<Option<Value>> = ins.iter().map(|o| o.clone().map(Value::Tensor)).collect();
        let refs: Vec<Option<&Value>> = vals.iter().map(|v| v.as_ref()).collect();
        let mut runner = |_: &dyn crate::ops::kernel::Subgraph,
                          _: Vec<(String, Value)>|
         -> Result<Vec<Value>, KernelError> {
            Err(KernelError::new("no subgraphs"))
        };
        let mut cx = crate::ops::kernel::RunCtx {
            runner: &mut runner,
            parts: None,
        };
        let mut out = kernel(&mut cx, &refs)?;
        Ok(out.remove(0).into_tensor().expect("a tensor"))
    }

    fn int_attr(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            i: Some(v),
            r#type: Some(2),
            ..Default::default()
        }
    }

    fn str_attr(name: &str, v: &str) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            s: Some(v.as_bytes().to_vec()),
            r#type: Some(3),
            ..Default::default()
        }
    }

    #[test]
    fn erf_single_agrees_with_erf_to_float32_accuracy() {
        let mut worst = 0f64;
        for i in -6000..=6000 {
            let x = i as f64 / 1000.0;
            let (a, b) = (erf_single(x), erf(x));
            let rel = if b == 0.0 {
                a.abs()
            } else {
                ((a - b) / b).abs()
            };
            worst = worst.max(rel);
        }
        assert!(worst < 2e-7, "worst relative error {worst}");
        assert!(erf_single(f64::NAN).is_nan());
        assert_eq!(erf_single(40.0), 1.0);
        assert!((erf_single(1e-8) / 1e-8 - std::f64::consts::FRAC_2_SQRT_PI).abs() < 1e-12);
    }

    #[test]
    fn erf_matches_known_values() {
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(-2.0) + 0.995_322_265_018_952_7).abs() < 1e-14);
        assert!((erf(3.5) - 0.999_999_256_901_627_7).abs() < 1e-14);
        assert!((erf(1e-5) / 1e-5 - std::f64::consts::FRAC_2_SQRT_PI).abs() < 1e-9);
    }

    #[test]
    fn integer_mod_follows_the_divisor_sign_unless_fmod() {
        let a = t(&[4], vec![-7i32, 7, -7, 7]);
        let b = t(&[4], vec![3i32, -3, -3, 3]);
        let m = run("Mod", vec![], 13, &[Some(a.clone()), Some(b.clone())]).unwrap();
        assert_eq!(m.to_i64_vec().unwrap(), vec![2, -2, -1, 1]);
        let f = run(
            "Mod",
            vec![int_attr("fmod", 1)],
            13,
            &[Some(a.clone()), Some(b)],
        )
        .unwrap();
        assert_eq!(f.to_i64_vec().unwrap(), vec![-1, 1, -1, 1]);
        let zero = t(&[1], vec![0i32]);
        let e = run("Mod", vec![], 13, &[Some(a), Some(zero)]).unwrap_err();
        assert!(e.0.contains("zero"), "{e}");
        // i8::MIN % -1 must not overflow
        let m = run(
            "Mod",
            vec![],
            13,
            &[Some(t(&[1], vec![i8::MIN])), Some(t(&[1], vec![-1i8]))],
        )
        .unwrap();
        assert_eq!(m.to_i64_vec().unwrap(), vec![0]);
    }

    #[test]
    fn shifts_beyond_the_width_and_negative_amounts() {
        let x = t(&[3], vec![-8i8, 64, -8]);
        let s = t(&[3], vec![9i8, 1, -1]);
        let l = run(
            "BitShift",
            vec![str_attr("direction", "LEFT")],
            11,
            &[Some(x.clone()), Some(s.clone())],
        )
        .unwrap();
        assert_eq!(l.to_i64_vec().unwrap(), vec![0, -128, 0]);
        let r = run(
            "BitShift",
            vec![str_attr("direction", "RIGHT")],
            11,
            &[Some(x), Some(s)],
        )
        .unwrap();
        assert_eq!(r.to_i64_vec().unwrap(), vec![-1, 32, -1]);
    }

    #[test]
    fn integer_pow_is_exact_and_mixed_types_work() {
        let b = t(&[2], vec![3i64, 1 << 20]);
        let e = t(&[2], vec![3i64, 3]);
        let p = run("Pow", vec![], 15, &[Some(b), Some(e)]).unwrap();
        assert_eq!(p.to_i64_vec().unwrap(), vec![27, 1i64 << 60]);
        let f = run(
            "Pow",
            vec![],
            15,
            &[Some(t(&[1], vec![2.0f32])), Some(t(&[1], vec![-1i32]))],
        )
        .unwrap();
        assert_eq!(f.to_f64_vec().unwrap(), vec![0.5]);
    }

    #[test]
    fn max_propagates_nan_and_broadcasts() {
        let a = t(&[2, 1], vec![f32::NAN, 1.0]);
        let b = t(&[2], vec![0.0f32, 5.0]);
        let m = run("Max", vec![], 13, &[Some(a), Some(b)]).unwrap();
        assert_eq!(m.shape(), &[2, 2]);
        let v = m.to_f64_vec().unwrap();
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[1.0, 5.0]);
    }

    #[test]
    fn clip_inputs_and_attributes() {
        let x = t(&[3], vec![-5i8, 0, 9]);
        let lo = t(&[], vec![-2i8]);
        let y = run("Clip", vec![], 13, &[Some(x.clone()), Some(lo), None]).unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), vec![-2, 0, 9]);
        // min > max: everything becomes max
        let y = run(
            "Clip",
            vec![],
            13,
            &[Some(x), Some(t(&[], vec![3i8])), Some(t(&[], vec![1i8]))],
        )
        .unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), vec![1, 1, 1]);
        let attr = AttributeProto {
            name: Some("max".into()),
            f: Some(0.5),
            r#type: Some(1),
            ..Default::default()
        };
        let y = run("Clip", vec![attr], 6, &[Some(t(&[2], vec![-1.0f32, 2.0]))]).unwrap();
        assert_eq!(y.to_f64_vec().unwrap(), vec![-1.0, 0.5]);
    }

    #[test]
    fn where_and_comparisons_broadcast() {
        let c = t(&[2], vec![true, false]);
        let x = t(&[2, 1], vec![1i64, 2]);
        let y = t(&[], vec![0i64]);
        let w = run(
            "Where",
            vec![],
            16,
            &[Some(c), Some(x.clone()), Some(y.clone())],
        )
        .unwrap();
        assert_eq!(w.shape(), &[2, 2]);
        assert_eq!(w.to_i64_vec().unwrap(), vec![1, 0, 2, 0]);
        let g = run("Greater", vec![], 13, &[Some(x), Some(y)]).unwrap();
        assert_eq!(g.dtype(), crate::tensor::DataType::Bool);
        let bad = run(
            "Less",
            vec![],
            13,
            &[Some(t(&[1], vec![1i32])), Some(t(&[1], vec![1i64]))],
        );
        assert!(bad.is_err());
    }

    #[test]
    fn unary_ops_reject_wrong_types() {
        assert!(run("Sqrt", vec![], 13, &[Some(t(&[1], vec![4i32]))]).is_err());
        assert!(run("Neg", vec![], 13, &[Some(t(&[1], vec![4u8]))]).is_err());
        let r = run(
            "Round",
            vec![],
            11,
            &[Some(t(&[4], vec![0.5f32, 1.5, 2.5, -2.5]))],
        )
        .unwrap();
        assert_eq!(r.to_f64_vec().unwrap(), vec![0.0, 2.0, 2.0, -2.0]);
        let a = run("Abs", vec![], 13, &[Some(t(&[2], vec![i8::MIN, -3]))]).unwrap();
        assert_eq!(a.to_i64_vec().unwrap(), vec![-128, 3]);
    }
}
