//! `Trilu`: the upper (or lower) triangle of the last two axes, from
//! diagonal `k`; the rest zero.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{gather_flat_fill, opt_ints_in, out1};
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Tensor;

/// Output 0 has input 0's type and shape.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let upper = info.attrs.int_or("upper", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let k = opt_ints_in(ins, 1)?
            .and_then(|v| v.first().copied())
            .unwrap_or(0);
        let r = x.rank();
        if r < 2 {
            bail!("Trilu needs rank >= 2, got {r}");
        }
        let (h, w) = (x.shape()[r - 2], x.shape()[r - 1]);
        let n = x.len();
        let pos: Vec<usize> = (0..n)
            .map(|p| {
                let j = (p % w.max(1)) as i64;
                let i = ((p / w.max(1)) % h.max(1)) as i64;
                let keep = if upper { j - i >= k } else { j - i <= k };
                if keep {
                    p
                } else {
                    usize::MAX
                }
            })
            .collect();
        let zero = Tensor::zeros(x.dtype(), &[])?;
        out1(gather_flat_fill(x, &pos, x.shape(), &zero)?)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    #[test]
    fn trilu_lower_from_diagonal_one() {
        let m = Some(i64s(&[2, 3], vec![1, 2, 3, 4, 5, 6]));
        let lower = run(
            kernel,
            14,
            vec![int("upper", 0)],
            vec![m, Some(Tensor::scalar(1i64))],
            1,
        )
        .unwrap();
        assert_eq!(lower[0], i64s(&[2, 3], vec![1, 2, 0, 4, 5, 6]));
    }
}
