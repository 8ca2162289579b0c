//! `DepthToSpace`: channel blocks moved into `blocksize` x `blocksize`
//! spatial blocks (`DCR` or `CRD` order).

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{out1, permute};
use crate::ops::{InferCtx, ShapeError};
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    space_depth(cx, true)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let b = info
        .attrs
        .int("blocksize")
        .ok_or_else(|| KernelError::new("DepthToSpace needs 'blocksize'"))?;
    let crd = info.attrs.string_or("mode", "DCR") == "CRD";
    if b <= 0 {
        bail!("blocksize must be positive");
    }
    let b = b as usize;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let [n, c, h, w] = x.shape()[..] else {
            bail!("DepthToSpace needs a 4-D input")
        };
        if c % (b * b) != 0 {
            bail!("channels {c} not divisible by blocksize² {}", b * b);
        }
        let c2 = c / (b * b);
        let (shape6, perm) = if crd {
            ([n, c2, b, b, h, w], [0, 1, 4, 2, 5, 3])
        } else {
            ([n, b, b, c2, h, w], [0, 3, 4, 1, 5, 2])
        };
        let y = permute(&x.reshape(&shape6)?, &perm);
        out1(y.reshape(&[n, c2, h * b, w * b])?)
    }))
}

pub(super) fn space_depth(cx: &mut InferCtx, to_space: bool) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let b = cx
        .attrs
        .int("blocksize")
        .filter(|&b| b > 0)
        .ok_or_else(|| ShapeError::new("a positive 'blocksize' is required"))?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, Some(vec![None; 4]));
        return Ok(());
    };
    if shape.len() != 4 {
        return Err(ShapeError::new(format!(
            "expected rank 4, got {}",
            shape.len()
        )));
    }
    let be = Expr::int(b);
    let b2 = Expr::int(b * b);
    let f = |d: &Dim, g: &dyn Fn(&Expr) -> Expr| d.as_ref().map(g);
    let out = if to_space {
        vec![
            shape[0].clone(),
            f(&shape[1], &|e| e.floor_div(&b2)),
            f(&shape[2], &|e| e.mul(&be)),
            f(&shape[3], &|e| e.mul(&be)),
        ]
    } else {
        vec![
            shape[0].clone(),
            f(&shape[1], &|e| e.mul(&b2)),
            f(&shape[2], &|e| e.floor_div(&be)),
            f(&shape[3], &|e| e.floor_div(&be)),
        ]
    };
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}
