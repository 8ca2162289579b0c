//! `SpaceToDepth`: `blocksize` x `blocksize` spatial blocks moved into
//! channels.

use super::depth_to_space::space_depth;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{out1, permute};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    space_depth(cx, false)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let b = info
        .attrs
        .int("blocksize")
        .ok_or_else(|| KernelError::new("SpaceToDepth needs 'blocksize'"))?;
    if b <= 0 {
        bail!("blocksize must be positive");
    }
    let b = b as usize;
    // DCR (default): the block offsets go before the channels; CRD: after.
    let perm = if info.attrs.string_or("mode", "DCR") == "CRD" {
        [0, 1, 3, 5, 2, 4]
    } else {
        [0, 3, 5, 1, 2, 4]
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let [n, c, h, w] = x.shape()[..] else {
            bail!("SpaceToDepth needs a 4-D input")
        };
        if h % b != 0 || w % b != 0 {
            bail!("spatial size {h}x{w} not divisible by blocksize {b}");
        }
        let y = permute(&x.reshape(&[n, c, h / b, b, w / b, b])?, &perm);
        out1(y.reshape(&[n, c * b * b, h / b, w / b])?)
    }))
}
