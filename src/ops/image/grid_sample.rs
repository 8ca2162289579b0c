//! `GridSample`: the input sampled at the grid's normalised coordinates
//! (bilinear, nearest or bicubic; zeros, border or reflection padding).

use super::resampling::{cubic, from_f64, parse_mode, Mode};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let (Some(x), Some(g)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        let r = cx.rank(0).or(cx.rank(1));
        cx.set_tensor(0, elem, r.map(|r| vec![None; r]));
        return Ok(());
    };
    if x.len() < 3 || g.len() != x.len() {
        return Err(ShapeError::new(format!(
            "X of rank {} and grid of rank {} do not match",
            x.len(),
            g.len()
        )));
    }
    let mut out = vec![x[0].clone().or(g[0].clone()), x[1].clone()];
    out.extend(g[1..g.len() - 1].iter().cloned());
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Pad {
    Zeros,
    Border,
    Reflection,
}

fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let rng = hi - lo;
    if rng <= 0.0 {
        return lo;
    }
    if x < lo {
        let dx = lo - x;
        let n = (dx / rng).floor();
        let r = dx - n * rng;
        if n as i64 % 2 == 0 {
            lo + r
        } else {
            hi - r
        }
    } else if x > hi {
        let dx = x - hi;
        let n = (dx / rng).floor();
        let r = dx - n * rng;
        if n as i64 % 2 == 0 {
            hi - r
        } else {
            lo + r
        }
    } else {
        x
    }
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let align = info.attrs.int_or("align_corners", 0) != 0;
    let default_mode = if info.opset >= 20 {
        "linear"
    } else {
        "bilinear"
    };
    let mode = parse_mode(&info.attrs.string_or("mode", default_mode))?;
    let pad = match info.attrs.string_or("padding_mode", "zeros").as_str() {
        "zeros" => Pad::Zeros,
        "border" => Pad::Border,
        "reflection" => Pad::Reflection,
        other => bail!("unknown padding_mode '{other}'"),
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let grid = tensor_in(ins, 1)?;
        let r = x.rank();
        if r < 3 {
            bail!("X must be [N, C, spatial...], got {:?}", x.shape());
        }
        let sr = r - 2;
        let (n, c) = (x.shape()[0], x.shape()[1]);
        let sp: Vec<usize> = x.shape()[2..].to_vec();
        if grid.rank() != r || grid.shape()[0] != n || grid.shape()[r - 1] != sr {
            bail!(
                "grid must be [{n}, out spatial..., {sr}], got {:?}",
                grid.shape()
            );
        }
        let osp: Vec<usize> = grid.shape()[1..r - 1].to_vec();
        let on: usize = osp.iter().product();
        let inn: usize = sp.iter().product();
        let xv = x
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("X must be numeric"))?;
        let gv = grid
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("grid must be numeric"))?;
        let mut out = vec![0.0; n * c * on];
        // strides of the input's spatial dims
        let mut strides = vec![1usize; sr];
        for d in (0..sr.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * sp[d + 1];
        }
        for b in 0..n {
            for o in 0..on {
                let g = &gv[(b * on + o) * sr..(b * on + o + 1) * sr];
                // per spatial dim: list of (index or None for zero, weight)
                let mut per_dim: Vec<Vec<(Option<usize>, f64)>> = Vec::with_capacity(sr);
                for d in 0..sr {
                    let len = sp[d];
                    let lf = len as f64;
                    let gc = g[sr - 1 - d];
                    let mut coord = if align {
                        (gc + 1.0) / 2.0 * (lf - 1.0)
                    } else {
                        ((gc + 1.0) * lf - 1.0) / 2.0
                    };
                    let (lo, hi) = if align {
                        (0.0, lf - 1.0)
                    } else {
                        (-0.5, lf - 0.5)
                    };
                    match pad {
                        Pad::Border => coord = coord.clamp(0.0, (lf - 1.0).max(0.0)),
                        Pad::Reflection => coord = reflect(coord, lo, hi),
                        Pad::Zeros => {}
                    }
                    let fetch = |i: i64| -> Option<usize> {
                        if len == 0 {
                            return None;
                        }
                        match pad {
                            Pad::Zeros => (i >= 0 && (i as usize) < len).then_some(i as usize),
                            Pad::Border => Some(i.clamp(0, len as i64 - 1) as usize),
                            Pad::Reflection => {
                                let v = reflect(i as f64, lo, hi).round() as i64;
                                Some(v.clamp(0, len as i64 - 1) as usize)
                            }
                        }
                    };
                    let taps: Vec<(Option<usize>, f64)> = if !coord.is_finite() {
                        vec![(None, 0.0)]
                    } else {
                        match mode {
                            Mode::Nearest => {
                                vec![(fetch(coord.round_ties_even() as i64), 1.0)]
                            }
                            Mode::Linear => {
                                let f = coord.floor();
                                let t = coord - f;
                                let f = f as i64;
                                vec![(fetch(f), 1.0 - t), (fetch(f.saturating_add(1)), t)]
                            }
                            Mode::Cubic => {
                                let f = coord.floor();
                                let t = coord - f;
                                let f = f as i64;
                                (-1..=2)
                                    .map(|k| {
                                        (fetch(f.saturating_add(k)), cubic(-0.75, k as f64 - t))
                                    })
                                    .collect()
                            }
                        }
                    };
                    per_dim.push(taps);
                }
                for ch in 0..c {
                    let img = &xv[(b * c + ch) * inn..(b * c + ch + 1) * inn];
                    let mut acc = 0.0;
                    let mut idx = vec![0usize; sr];
                    'outer: loop {
                        let mut w = 1.0;
                        let mut flat = Some(0usize);
                        for d in 0..sr {
                            let (i, wt) = per_dim[d][idx[d]];
                            w *= wt;
                            flat = match (flat, i) {
                                (Some(f), Some(i)) => Some(f + i * strides[d]),
                                _ => None,
                            };
                        }
                        if let Some(f) = flat {
                            acc += w * img[f];
                        }
                        for d in (0..sr).rev() {
                            idx[d] += 1;
                            if idx[d] < per_dim[d].len() {
                                continue 'outer;
                            }
                            idx[d] = 0;
                        }
                        break;
                    }
                    out[(b * c + ch) * on + o] = acc;
                }
            }
        }
        let mut oshape = vec![n, c];
        oshape.extend(osp);
        Ok(vec![Value::Tensor(from_f64(x.dtype(), &oshape, out)?)])
    }))
}
