//! The `reduction` of `ScatterElements` and `ScatterND` (`none`, `add`,
//! `mul`, `max`, `min`) and writing updates at flat positions with it.

use crate::ops::kernel::{KernelError, NodeInfo};
use crate::ops::kernels::numeric::Num;
use crate::tensor::Tensor;
use crate::{bail, dispatch_num, map_pair};
use ndarray::{ArrayD, IxDyn};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Reduction {
    None,
    Add,
    Mul,
    Max,
    Min,
}

pub(super) fn reduction(info: &NodeInfo) -> Result<Reduction, KernelError> {
    Ok(match info.attrs.string_or("reduction", "none").as_str() {
        "none" => Reduction::None,
        "add" => Reduction::Add,
        "mul" => Reduction::Mul,
        "max" => Reduction::Max,
        "min" => Reduction::Min,
        other => bail!("unknown reduction '{other}'"),
    })
}

fn scatter_red<T: Num>(
    data: &Tensor,
    upd: &Tensor,
    pos: &[usize],
    red: Reduction,
) -> Result<Tensor, KernelError> {
    let d: &ArrayD<T> = crate::ops::kernels::typed(data, "data")?;
    let u: &ArrayD<T> = crate::ops::kernels::typed(upd, "updates")?;
    let mut v: Vec<T> = d.iter().copied().collect();
    for (&p, &x) in pos.iter().zip(u.iter()) {
        let Some(slot) = v.get_mut(p) else {
            bail!("scatter position {p} out of range")
        };
        *slot = match red {
            Reduction::None => x,
            Reduction::Add => slot.add(x),
            Reduction::Mul => slot.mul(x),
            Reduction::Max => {
                if x > *slot {
                    x
                } else {
                    *slot
                }
            }
            Reduction::Min => {
                if x < *slot {
                    x
                } else {
                    *slot
                }
            }
        };
    }
    Ok(T::wrap(ArrayD::from_shape_vec(IxDyn(d.shape()), v)?))
}

#[allow(clippy::clone_on_copy)]
/// Writes (or combines) `upd`'s elements into a copy of `data` at flat positions.
pub(super) fn scatter_apply(
    data: &Tensor,
    upd: &Tensor,
    pos: &[usize],
    red: Reduction,
) -> Result<Tensor, KernelError> {
    if pos.len() != upd.len() {
        bail!("{} updates for {} positions", upd.len(), pos.len());
    }
    if red == Reduction::None {
        return Ok(map_pair!(data, upd, d, u => {
            // a contiguous buffer is copied as one block
            let mut v: Vec<_> = match d.as_slice() {
                Some(s) => s.to_vec(),
                None => d.iter().cloned().collect(),
            };
            for (&p, x) in pos.iter().zip(u.iter()) {
                let Some(slot) = v.get_mut(p) else { bail!("scatter position {p} out of range") };
                *slot = x.clone();
            }
            ArrayD::from_shape_vec(IxDyn(d.shape()), v)?
        }));
    }
    if data.dtype() != upd.dtype() {
        bail!("data is {}, updates are {}", data.dtype(), upd.dtype());
    }
    dispatch_num!(
        data,
        scatter_red(data, upd, pos, red),
        bail!("reduction {red:?} does not accept {}", data.dtype())
    )
}
