//! DeformConv.

use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like, one, require_float};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};

/// Bilinear sample of an h×w plane at (y, x); points outside read as 0.
fn bilinear(p: &[f64], h: usize, w: usize, y: f64, x: f64) -> f64 {
    if !(y > -1.0 && y < h as f64 && x > -1.0 && x < w as f64) {
        return 0.0;
    }
    let (y0, x0) = (y.floor(), x.floor());
    let (fy, fx) = (y - y0, x - x0);
    let at = |yy: f64, xx: f64| {
        if yy >= 0.0 && xx >= 0.0 && (yy as usize) < h && (xx as usize) < w {
            p[yy as usize * w + xx as usize]
        } else {
            0.0
        }
    };
    at(y0, x0) * (1.0 - fy) * (1.0 - fx)
        + at(y0, x0 + 1.0) * (1.0 - fy) * fx
        + at(y0 + 1.0, x0) * fy * (1.0 - fx)
        + at(y0 + 1.0, x0 + 1.0) * fy * fx
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let w = shape_of(cx, 1);
    let off = shape_of(cx, 2);
    let out = match (x, w, off) {
        (Some(x), Some(w), Some(o)) if x.len() == 4 && w.len() == 4 && o.len() == 4 => {
            Some(vec![x[0].clone(), w[0].clone(), o[2].clone(), o[3].clone()])
        }
        _ => None,
    };
    cx.set_tensor(0, e, out);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = &info.attrs;
    let group = a.int_or("group", 1);
    let og = a.int_or("offset_group", 1);
    if group < 1 || og < 1 {
        bail!("group and offset_group must be positive");
    }
    let (group, og) = (group as usize, og as usize);
    let ks_attr = a.ints("kernel_shape");
    let dil = a.ints("dilations").unwrap_or_else(|| vec![1, 1]);
    let pads = a.ints("pads").unwrap_or_else(|| vec![0; 4]);
    let st = a.ints("strides").unwrap_or_else(|| vec![1, 1]);
    if dil.len() != 2 || pads.len() != 4 || st.len() != 2 {
        bail!("DeformConv supports 2-D convolutions only");
    }
    if dil.iter().chain(&st).any(|&v| v <= 0) {
        bail!("dilations and strides must be positive");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let w = tensor_in(ins, 1)?;
        let off = tensor_in(ins, 2)?;
        let b = opt_tensor_in(ins, 3)?;
        let m = opt_tensor_in(ins, 4)?;
        require_float(x, "X")?;
        let (xs, ws) = (x.shape(), w.shape());
        if xs.len() != 4 || ws.len() != 4 {
            bail!("DeformConv supports 2-D inputs only (X rank 4), got {xs:?} and {ws:?}");
        }
        let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
        let (oc, cg, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
        if let Some(k) = &ks_attr {
            if k[..] != [kh as i64, kw as i64] {
                bail!("kernel_shape {k:?} differs from W's {:?}", &ws[2..]);
            }
        }
        if c % group != 0 || oc % group != 0 || cg * group != c || c % og != 0 {
            bail!("channel counts do not match group {group} / offset_group {og}");
        }
        let oh = (h as i64 + pads[0] + pads[2] - (dil[0] * (kh as i64 - 1) + 1)) / st[0] + 1;
        let ow = (wd as i64 + pads[1] + pads[3] - (dil[1] * (kw as i64 - 1) + 1)) / st[1] + 1;
        if oh <= 0 || ow <= 0 {
            bail!("the kernel does not fit the padded input");
        }
        let (oh, ow) = (oh as usize, ow as usize);
        let kk = kh * kw;
        if off.shape() != [n, og * kk * 2, oh, ow] {
            bail!(
                "offset must have shape {:?}, got {:?}",
                [n, og * kk * 2, oh, ow],
                off.shape()
            );
        }
        if let Some(m) = m {
            if m.shape() != [n, og * kk, oh, ow] {
                bail!(
                    "mask must have shape {:?}, got {:?}",
                    [n, og * kk, oh, ow],
                    m.shape()
                );
            }
        }
        if let Some(b) = b {
            if b.shape() != [oc] {
                bail!("B must have shape [{oc}], got {:?}", b.shape());
            }
        }
        // Output and sampled columns live together.
        crate::tensor::budget::check_together(&[
            (&[n, oc, oh, ow], 8, 1),
            (&[n, c, kk, oh, ow], 8, 1),
        ])?;
        let xv = f64_of(x, "X")?;
        let wv = f64_of(w, "W")?;
        let ov = f64_of(off, "offset")?;
        let mv = m.map(|m| f64_of(m, "mask")).transpose()?;
        let bv = b.map(|b| f64_of(b, "B")).transpose()?;
        let cpo = c / og;
        let plane = oh * ow;
        // Sampled columns: [n][c][k][oh*ow].
        let mut cols = vec![0.0; n * c * kk * plane];
        for bi in 0..n {
            for ch in 0..c {
                let g = ch / cpo;
                let src = &xv[(bi * c + ch) * h * wd..(bi * c + ch + 1) * h * wd];
                for ki in 0..kh {
                    for kj in 0..kw {
                        let k = ki * kw + kj;
                        let oy_c = (bi * og * kk * 2 + (g * kk + k) * 2) * plane;
                        let ox_c = oy_c + plane;
                        for p in 0..oh {
                            for q in 0..ow {
                                let pos = p * ow + q;
                                let y = (p as i64 * st[0] - pads[0] + ki as i64 * dil[0]) as f64
                                    + ov[oy_c + pos];
                                let xx = (q as i64 * st[1] - pads[1] + kj as i64 * dil[1]) as f64
                                    + ov[ox_c + pos];
                                let mut v = bilinear(src, h, wd, y, xx);
                                if let Some(mv) = &mv {
                                    v *= mv[(bi * og * kk + g * kk + k) * plane + pos];
                                }
                                cols[((bi * c + ch) * kk + k) * plane + pos] = v;
                            }
                        }
                    }
                }
            }
        }
        let ocg = oc / group;
        let mut out = vec![0.0; n * oc * plane];
        for bi in 0..n {
            for o in 0..oc {
                let g = o / ocg;
                let dst = &mut out[(bi * oc + o) * plane..(bi * oc + o + 1) * plane];
                let bias = bv.as_ref().map_or(0.0, |b| b[o]);
                dst.iter_mut().for_each(|v| *v = bias);
                for ci in 0..cg {
                    let ch = g * cg + ci;
                    for k in 0..kk {
                        let wgt = wv[(o * cg + ci) * kk + k];
                        let col = &cols[((bi * c + ch) * kk + k) * plane
                            ..((bi * c + ch) * kk + k + 1) * plane];
                        for (d, s) in dst.iter_mut().zip(col) {
                            *d += wgt * s;
                        }
                    }
                }
            }
        }
        one(float_like(x, &[n, oc, oh, ow], out)?)
    }))
}
