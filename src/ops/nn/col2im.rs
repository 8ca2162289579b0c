//! Col2Im.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{dim_of, f64_of, float_like, numel, one, require_float};
use crate::ops::kernels::manip::{for_each_index, ints_in, strides};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let img = cx.value(1).map(|v| v.values.clone());
    let blk = cx.ints(2);
    let out = match (x, img) {
        (Some(x), Some(img)) if x.len() == 3 => {
            let c = match (&x[1], blk) {
                (Some(d), Some(b)) => Some(d.floor_div(&Expr::int(b.iter().product()))),
                _ => None,
            };
            let mut o = vec![x[0].clone(), c];
            o.extend(img.into_iter().map(Some));
            Some(o)
        }
        _ => None,
    };
    cx.set_tensor(0, e, out);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dil = info.attrs.ints("dilations");
    let pads = info.attrs.ints("pads");
    let strd = info.attrs.ints("strides");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        require_float(x, "input")?;
        let img = ints_in(ins, 1)?;
        let blk = ints_in(ins, 2)?;
        let k = img.len();
        if blk.len() != k || k == 0 {
            bail!("image_shape and block_shape must have the same non-zero length");
        }
        let img: Vec<usize> = img
            .iter()
            .map(|&d| dim_of(d, "image_shape"))
            .collect::<Result<_, _>>()?;
        let blk: Vec<usize> = blk
            .iter()
            .map(|&d| dim_of(d, "block_shape"))
            .collect::<Result<_, _>>()?;
        let dil = dil.clone().unwrap_or_else(|| vec![1; k]);
        let pads = pads.clone().unwrap_or_else(|| vec![0; 2 * k]);
        let strd = strd.clone().unwrap_or_else(|| vec![1; k]);
        if dil.len() != k || pads.len() != 2 * k || strd.len() != k {
            bail!("dilations/pads/strides do not match the image rank {k}");
        }
        if dil.iter().chain(&strd).any(|&v| v <= 0) {
            bail!("dilations and strides must be positive");
        }
        let sh = x.shape();
        if sh.len() != 3 {
            bail!("input must have rank 3, got {sh:?}");
        }
        let bprod: usize = blk.iter().product();
        if bprod == 0 || sh[1] % bprod != 0 {
            bail!(
                "input dimension 1 ({}) is not a multiple of the block size {bprod}",
                sh[1]
            );
        }
        let c = sh[1] / bprod;
        // Number of block positions along each axis.
        let mut cnt = vec![0usize; k];
        for i in 0..k {
            let eff = dil[i] * (blk[i] as i64 - 1) + 1;
            let span = img[i] as i64 + pads[i] + pads[i + k] - eff;
            if span < 0 {
                bail!("block does not fit the padded image on axis {i}");
            }
            cnt[i] = (span / strd[i] + 1) as usize;
        }
        let l: usize = cnt.iter().product();
        if sh[2] != l {
            bail!("input has {} blocks, the geometry gives {l}", sh[2]);
        }
        let n = sh[0];
        let v = f64_of(x, "input")?;
        let ipix: usize = img.iter().product();
        let mut out_shape = vec![n, c];
        out_shape.extend_from_slice(&img);
        let mut out = vec![0.0; numel(&out_shape)?];
        let ist = strides(&img);
        let mut blocks = Vec::new();
        for_each_index(&blk, |b| blocks.push(b.to_vec()));
        let mut poss = Vec::new();
        for_each_index(&cnt, |p| poss.push(p.to_vec()));
        for b in 0..n {
            for ch in 0..c {
                for (bi, bo) in blocks.iter().enumerate() {
                    let row = ch * bprod + bi;
                    for (li, p) in poss.iter().enumerate() {
                        let mut at = 0usize;
                        let mut inside = true;
                        for i in 0..k {
                            let pos = p[i] as i64 * strd[i] + bo[i] as i64 * dil[i] - pads[i];
                            if pos < 0 || pos >= img[i] as i64 {
                                inside = false;
                                break;
                            }
                            at += pos as usize * ist[i];
                        }
                        if inside {
                            out[(b * c + ch) * ipix + at] += v[(b * sh[1] + row) * l + li];
                        }
                    }
                }
            }
        }
        one(float_like(x, &out_shape, out)?)
    }))
}
