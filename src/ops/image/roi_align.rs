//! `RoiAlign`: average or max pooling of bilinear samples over each
//! region of interest.

use super::resampling::from_f64;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let nr = cx.shape(1).and_then(|s| s.first().cloned()).flatten();
    let c = cx.shape(0).and_then(|s| s.get(1).cloned()).flatten();
    let oh = cx.attrs.int_or("output_height", 1);
    let ow = cx.attrs.int_or("output_width", 1);
    cx.set_tensor(
        0,
        elem,
        Some(vec![nr, c, Some(Expr::int(oh)), Some(Expr::int(ow))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let half_pixel = info.opset >= 16
        && info
            .attrs
            .string_or("coordinate_transformation_mode", "half_pixel")
            == "half_pixel";
    let max_mode = match info.attrs.string_or("mode", "avg").as_str() {
        "avg" => false,
        "max" => true,
        other => bail!("unknown mode '{other}'"),
    };
    let oh = info.attrs.int_or("output_height", 1);
    let ow = info.attrs.int_or("output_width", 1);
    if oh <= 0 || ow <= 0 || oh > 1 << 20 || ow > 1 << 20 {
        bail!("output size {oh}x{ow} is invalid");
    }
    let (oh, ow) = (oh as usize, ow as usize);
    let sampling = info.attrs.int_or("sampling_ratio", 0).max(0) as usize;
    let scale = info.attrs.float_or("spatial_scale", 1.0) as f64;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let rois = tensor_in(ins, 1)?;
        let bi = tensor_in(ins, 2)?.to_i64_vec()?;
        if x.rank() != 4 {
            bail!("X must be [N, C, H, W], got {:?}", x.shape());
        }
        let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
        if rois.rank() != 2 || rois.shape()[1] != 4 {
            bail!("rois must be [num_rois, 4], got {:?}", rois.shape());
        }
        let nr = rois.shape()[0];
        if bi.len() != nr {
            bail!("batch_indices has {} entries, {nr} rois", bi.len());
        }
        let xv = x
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("X must be numeric"))?;
        let rv = rois
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("rois must be numeric"))?;
        let off = if half_pixel { 0.5 } else { 0.0 };
        let total = crate::tensor::budget::check(&[nr, c, oh, ow], 8)?;
        let mut out = vec![0.0; total];
        for r in 0..nr {
            let b = bi[r];
            if b < 0 || b as usize >= n {
                bail!("batch index {b} is out of range for {n} images");
            }
            let b = b as usize;
            let x1 = rv[r * 4] * scale - off;
            let y1 = rv[r * 4 + 1] * scale - off;
            let x2 = rv[r * 4 + 2] * scale - off;
            let y2 = rv[r * 4 + 3] * scale - off;
            let (mut rw, mut rh) = (x2 - x1, y2 - y1);
            if !half_pixel {
                rw = rw.max(1.0);
                rh = rh.max(1.0);
            }
            let bh = rh / oh as f64;
            let bw = rw / ow as f64;
            let gh = if sampling > 0 {
                sampling
            } else {
                (rh / oh as f64).ceil().max(1.0) as usize
            };
            let gw = if sampling > 0 {
                sampling
            } else {
                (rw / ow as f64).ceil().max(1.0) as usize
            };
            if gh.saturating_mul(gw) > 1 << 20 {
                bail!("roi {r} needs a {gh}x{gw} sampling grid per bin: too large");
            }
            let count = (gh * gw) as f64;
            for ch in 0..c {
                let img = &xv[(b * c + ch) * h * w..(b * c + ch + 1) * h * w];
                for ph in 0..oh {
                    for pw in 0..ow {
                        let mut acc = if max_mode { f64::NEG_INFINITY } else { 0.0 };
                        for iy in 0..gh {
                            let y = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gh as f64;
                            for ix in 0..gw {
                                let xx = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gw as f64;
                                let taps = bilinear_taps(y, xx, h, w);
                                if max_mode {
                                    let m = taps
                                        .iter()
                                        .map(|&(i, wt)| wt * img[i])
                                        .fold(f64::NEG_INFINITY, f64::max);
                                    let m = if taps.is_empty() { 0.0 } else { m };
                                    acc = acc.max(m);
                                } else {
                                    acc += taps.iter().map(|&(i, wt)| wt * img[i]).sum::<f64>();
                                }
                            }
                        }
                        out[((r * c + ch) * oh + ph) * ow + pw] =
                            if max_mode { acc } else { acc / count };
                    }
                }
            }
        }
        Ok(vec![Value::Tensor(from_f64(
            x.dtype(),
            &[nr, c, oh, ow],
            out,
        )?)])
    }))
}

/// The four (flat index, weight) taps of a bilinear sample; none outside.
fn bilinear_taps(y: f64, x: f64, h: usize, w: usize) -> Vec<(usize, f64)> {
    if h == 0 || w == 0 || y < -1.0 || y > h as f64 || x < -1.0 || x > w as f64 {
        return vec![];
    }
    let (mut y, mut x) = (y.max(0.0), x.max(0.0));
    let mut yl = y.floor() as usize;
    let mut xl = x.floor() as usize;
    let yh;
    let xh;
    if yl >= h - 1 {
        yl = h - 1;
        yh = h - 1;
        y = yl as f64;
    } else {
        yh = yl + 1;
    }
    if xl >= w - 1 {
        xl = w - 1;
        xh = w - 1;
        x = xl as f64;
    } else {
        xh = xl + 1;
    }
    let (ly, lx) = (y - yl as f64, x - xl as f64);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    vec![
        (yl * w + xl, hy * hx),
        (yl * w + xh, hy * lx),
        (yh * w + xl, ly * hx),
        (yh * w + xh, ly * lx),
    ]
}
