//! `ReverseSequence`: each batch entry's first `sequence_lens[i]` time
//! steps reversed.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{for_each_index, gather_flat, ints_in, out1, strides};
use crate::ops::kernels::norm_axis;
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};

/// Output 0 has input 0's type and shape.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let time_axis = info.attrs.int_or("time_axis", 0);
    let batch_axis = info.attrs.int_or("batch_axis", 1);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let lens = ints_in(ins, 1)?;
        if x.rank() < 2 {
            bail!("ReverseSequence needs rank >= 2");
        }
        let ta = norm_axis(time_axis, x.rank())?;
        let ba = norm_axis(batch_axis, x.rank())?;
        if ta == ba || ta > 1 || ba > 1 {
            bail!("time_axis and batch_axis must be 0 and 1");
        }
        let sh = x.shape().to_vec();
        if lens.len() != sh[ba] {
            bail!(
                "sequence_lens has {} values, batch size is {}",
                lens.len(),
                sh[ba]
            );
        }
        if lens.iter().any(|&l| l < 0 || l as usize > sh[ta]) {
            bail!(
                "sequence_lens {lens:?} out of range for time size {}",
                sh[ta]
            );
        }
        let st = strides(&sh);
        let mut pos = Vec::with_capacity(x.len());
        for_each_index(&sh, |ix| {
            let l = lens[ix[ba]] as usize;
            let mut p: usize = ix.iter().zip(&st).map(|(a, b)| a * b).sum();
            let t = ix[ta];
            if t < l {
                p = p - t * st[ta] + (l - 1 - t) * st[ta];
            }
            pos.push(p);
        });
        out1(gather_flat(x, &pos, &sh)?)
    }))
}
