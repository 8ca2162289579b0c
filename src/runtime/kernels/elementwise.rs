//! Elementwise kernels: arithmetic with numpy broadcasting, activations,
//! identity.

use super::{typed, zip2};
use crate::bail;
use crate::runtime::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
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
