//! Running sums and products along an axis, shared by `CumSum` and
//! `CumProd` (`exclusive`, `reverse`).

use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{ints_in, out1};
use crate::ops::kernels::norm_axis;
use crate::ops::kernels::numeric::Num;
use crate::tensor::Tensor;
use crate::{bail, dispatch_num};
use ndarray::Axis;

/// A running fold along one axis: CumSum (`+` from 0) and CumProd
/// (`*` from 1), inclusive or exclusive, forward or reversed.
#[derive(Clone, Copy, Debug)]
pub enum Cumulative {
    Sum,
    Prod,
}

fn cumulative_typed<T: Num>(
    x: &Tensor,
    ax: usize,
    op: Cumulative,
    exclusive: bool,
    reverse: bool,
) -> Result<Tensor, KernelError> {
    let a: &ndarray::ArrayD<T> = crate::ops::kernels::typed(x, "x")?;
    let (start, step): (T, fn(T, T) -> T) = match op {
        Cumulative::Sum => (T::zero(), T::add),
        Cumulative::Prod => (T::one(), T::mul),
    };
    let mut out = a.clone();
    for mut lane in out.lanes_mut(Axis(ax)) {
        let n = lane.len();
        let mut acc = start;
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let v = lane[i];
            if exclusive {
                lane[i] = acc;
                acc = step(acc, v);
            } else {
                acc = step(acc, v);
                lane[i] = acc;
            }
        }
    }
    Ok(T::wrap(out))
}

/// The kernel of CumSum / CumProd (axis as input 1).
pub fn cumulative(info: &NodeInfo, op: Cumulative) -> Result<Kernel, KernelError> {
    let exclusive = info.attrs.int_or("exclusive", 0) != 0;
    let reverse = info.attrs.int_or("reverse", 0) != 0;
    let name = match op {
        Cumulative::Sum => "CumSum",
        Cumulative::Prod => "CumProd",
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axis = ints_in(ins, 1)?;
        let [axis] = axis[..] else {
            bail!("{name} axis must have one element")
        };
        let ax = norm_axis(axis, x.rank())?;
        out1(dispatch_num!(
            x,
            cumulative_typed(x, ax, op, exclusive, reverse),
            bail!("{name} does not accept {}", x.dtype())
        )?)
    }))
}
