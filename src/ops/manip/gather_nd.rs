//! `GatherND`: slices picked by index tuples along the last index axis,
//! after `batch_dims` shared leading axes.

use super::index_positions::nd_positions;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{checked_numel, gather_flat, out1};
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let b = cx.attrs.int_or("batch_dims", 0).max(0) as usize;
    let (Some(data), Some(ind)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let Some(k) = ind.last().cloned().flatten().and_then(|e| e.as_int()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let k = k.max(0) as usize;
    if b + k > data.len() || ind.is_empty() {
        return Err(ShapeError::new(format!(
            "indices of depth {k} do not fit data of rank {}",
            data.len()
        )));
    }
    let mut out = ind[..ind.len() - 1].to_vec();
    out.extend(data[b + k..].iter().cloned());
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let batch = info.attrs.int_or("batch_dims", 0);
    if batch < 0 {
        bail!("batch_dims must be >= 0");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let (starts, slice, grid) = nd_positions(x.shape(), it, batch as usize)?;
        let k = it.shape()[it.rank() - 1];
        let mut shape = grid;
        shape.extend_from_slice(&x.shape()[batch as usize + k..]);
        checked_numel(&shape)?;
        let pos: Vec<usize> = starts.iter().flat_map(|&s| s..s + slice).collect();
        out1(gather_flat(x, &pos, &shape)?)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;

    #[test]
    fn gather_nd_with_batch_dims() {
        // data [2,2,2], indices [2,1] with batch_dims=1 → data[b, idx[b]]
        let data = Some(i64s(&[2, 2, 2], (0..8).collect()));
        let idx = Some(i64s(&[2, 1], vec![1, 0]));
        let y = run(kernel, 13, vec![int("batch_dims", 1)], vec![data, idx], 1).unwrap();
        assert_eq!(y[0], i64s(&[2, 2], vec![2, 3, 4, 5]));
    }
}
