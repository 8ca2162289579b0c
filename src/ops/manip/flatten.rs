//! `Flatten`: the input as a 2-D matrix split before `axis`.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::out1;
use crate::ops::shape_rules::product;
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, Some(vec![None, None]));
        return Ok(());
    };
    let r = shape.len() as i64;
    let axis = cx.attrs.int_or("axis", 1);
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a > r {
        return Err(ShapeError::new(format!(
            "axis {axis} is out of range for rank {r}"
        )));
    }
    let (h, t) = shape.split_at(a as usize);
    cx.set_tensor(0, elem, Some(vec![product(h), product(t)]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 1);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let r = x.rank() as i64;
        let a = if axis < 0 { axis + r } else { axis };
        if a < 0 || a > r {
            bail!("axis {axis} is out of range for rank {r}");
        }
        let (h, t) = x.shape().split_at(a as usize);
        let shape = [h.iter().product(), t.iter().product()];
        out1(x.reshape(&shape)?)
    }))
}
