//! Abs, Neg and Sign: every numeric type, computed in the input's own
//! type (wrapping for integers); known integer values propagate. One file
//! with a module per operator: they differ in one function.

use super::float_map::num_map;
use crate::ops::kernel::KernelError;
use crate::ops::kernels::numeric::Num;
use crate::tensor::Tensor;

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
    num_map::<T>(x, abs_of)
}

fn neg_t<T: Num>(x: &Tensor) -> Result<Tensor, KernelError> {
    num_map::<T>(x, neg_of)
}

fn sign_t<T: Num>(x: &Tensor) -> Result<Tensor, KernelError> {
    num_map::<T>(x, sign_of)
}

pub mod abs {
    use super::abs_t;
    use crate::bail;
    use crate::dispatch_num;
    use crate::expr::Expr;
    use crate::ops::elementwise::value_rules::{propagate_unary, same_as_input};
    use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
    use crate::ops::{InferCtx, ShapeError};
    use crate::tensor::Value;

    pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
        same_as_input(cx)?;
        propagate_unary(cx, |e| e.as_int().map(|v| Expr::int(v.saturating_abs())));
        Ok(())
    }

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(Box::new(|_, ins| {
            let x = tensor_in(ins, 0)?;
            let y = dispatch_num!(x, abs_t(x), bail!("Abs does not accept {}", x.dtype()))?;
            Ok(vec![Value::Tensor(y)])
        }))
    }
}

pub mod neg {
    use super::neg_t;
    use crate::bail;
    use crate::dispatch_num;
    use crate::ops::elementwise::value_rules::{propagate_unary, same_as_input};
    use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
    use crate::ops::{InferCtx, ShapeError};
    use crate::tensor::Value;

    pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
        same_as_input(cx)?;
        propagate_unary(cx, |e| Some(e.neg()));
        Ok(())
    }

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
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
}

pub mod sign {
    use super::sign_t;
    use crate::bail;
    use crate::dispatch_num;
    use crate::expr::Expr;
    use crate::ops::elementwise::value_rules::{propagate_unary, same_as_input};
    use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
    use crate::ops::{InferCtx, ShapeError};
    use crate::tensor::Value;

    pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
        same_as_input(cx)?;
        propagate_unary(cx, |e| e.as_int().map(|v| Expr::int(v.signum())));
        Ok(())
    }

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
        Ok(Box::new(|_, ins| {
            let x = tensor_in(ins, 0)?;
            let y = dispatch_num!(x, sign_t(x), bail!("Sign does not accept {}", x.dtype()))?;
            Ok(vec![Value::Tensor(y)])
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn neg_refuses_unsigned_and_abs_wraps() {
        assert!(run("Neg", vec![], 13, &[Some(t(&[1], vec![4u8]))]).is_err());
        let a = run("Abs", vec![], 13, &[Some(t(&[2], vec![i8::MIN, -3]))]).unwrap();
        assert_eq!(a.to_i64_vec().unwrap(), vec![-128, 3]);
    }
}
