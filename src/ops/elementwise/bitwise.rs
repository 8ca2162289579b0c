//! BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot and BitShift: integer
//! types only, one kernel with a module per operator (they differ in one
//! function). A shift by the width or more, or by a negative amount,
//! shifts every bit out.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError};
use crate::ops::kernels::numeric::{ew_dispatch_int, IntOps};
use crate::ops::kernels::{typed, zip2};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

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

fn bit_not_t<T: IntOps>(x: &Tensor) -> Result<Tensor, KernelError> {
    super::float_map::num_map::<T>(x, |v: T| v.bit_not())
}

/// One binary bitwise operator: the broadcast rule and the shared kernel.
macro_rules! bitwise {
    ($module:ident, $op:ident) => {
        pub mod $module {
            pub use crate::ops::elementwise::value_rules::broadcast_inputs as shape;
            use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

            pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
                Ok(super::bit_kernel(super::BitOp::$op))
            }
        }
    };
}

bitwise!(bitwise_and, And);
bitwise!(bitwise_or, Or);
bitwise!(bitwise_xor, Xor);

pub mod bit_shift {
    use super::{bit_kernel, BitOp};
    use crate::bail;
    pub use crate::ops::elementwise::value_rules::broadcast_inputs as shape;
    use crate::ops::kernel::{Kernel, KernelError, NodeInfo};

    pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
        let dir = info.attrs.string_or("direction", "");
        match dir.to_ascii_uppercase().as_str() {
            "LEFT" => Ok(bit_kernel(BitOp::Shl)),
            "RIGHT" => Ok(bit_kernel(BitOp::Shr)),
            _ => bail!("BitShift: direction must be LEFT or RIGHT, got '{dir}'"),
        }
    }
}

pub mod bitwise_not {
    use super::bit_not_t;
    use crate::bail;
    pub use crate::ops::elementwise::value_rules::same_as_input as shape;
    use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
    use crate::ops::kernels::numeric::ew_dispatch_int;
    use crate::tensor::Value;

    pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
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
}

#[cfg(test)]
mod tests {

    use crate::ops::test_kernel::{run_op as run, string as str_attr, tensor as t};

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
}
