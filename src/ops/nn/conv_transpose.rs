//! ConvTranspose: the gradient of Conv with respect to its input, with
//! `output_padding`, `output_shape` and auto padding.

use super::window_shape::{conv_kernel, ints_or};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::kernels::matrix_product::Gemm;
use crate::ops::kernels::sliding_window::{next_index, WindowAttrs};
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let (Some(x), Some(w)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    if x.len() < 3 || x.len() != w.len() {
        shape_bail!("ConvTranspose needs X of rank >= 3 and W of the same rank");
    }
    let n = x.len() - 2;
    let group = cx.attrs.int_or("group", 1);
    let m = w[1].as_ref().map(|e| e.mul(&Expr::int(group)));
    let mut shape = vec![x[0].clone(), m];
    if let Some(os) = cx.attrs.ints("output_shape") {
        if os.len() != n {
            shape_bail!("output_shape has {} values for {n} spatial axes", os.len());
        }
        shape.extend(os.iter().map(|&v| Some(Expr::int(v))));
    } else {
        let k = conv_kernel(cx, Some(&w));
        let s = ints_or(cx, "strides", n, 1)?;
        let d = ints_or(cx, "dilations", n, 1)?;
        let op = ints_or(cx, "output_padding", n, 0)?;
        let pads = ints_or(cx, "pads", 2 * n, 0)?;
        let auto = cx.attrs.string_or("auto_pad", "NOTSET");
        for i in 0..n {
            let (Some(h), Some(k)) = (&x[i + 2], &k) else {
                shape.push(None);
                continue;
            };
            let st = Expr::int(s[i]);
            if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
                shape.push(Some(h.mul(&st)));
            } else {
                let ext = (k[i] - 1) * d[i] + 1;
                let o = h
                    .sub(&Expr::int(1))
                    .mul(&st)
                    .add(&Expr::int(op[i] + ext - pads[i] - pads[i + n]));
                shape.push(Some(o));
            }
        }
    }
    cx.set_tensor(0, elem, Some(shape));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let wa = WindowAttrs::from_info(info);
    let group = info.attrs.int_or("group", 1);
    let out_pad = info.attrs.ints("output_padding");
    let out_shape_attr = info.attrs.ints("output_shape");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let w = tensor_in(ins, 1)?;
        let b = opt_tensor_in(ins, 2)?;
        let xs = x.shape().to_vec();
        let ws = w.shape().to_vec();
        if xs.len() < 3 || ws.len() != xs.len() {
            bail!(
                "ConvTranspose needs X of rank >= 3 and W of the same rank, got {xs:?} and {ws:?}"
            );
        }
        if group < 1 {
            bail!("group must be positive");
        }
        let grp = group as usize;
        let (n, c) = (xs[0], xs[1]);
        if ws[0] != c || c % grp != 0 {
            bail!("channels do not match: X {xs:?}, W {ws:?}, group {grp}");
        }
        let m_g = ws[1];
        let m = m_g * grp;
        let c_g = c / grp;
        let geo = ConvTGeo::new(
            &xs[2..],
            &ws[2..],
            &wa,
            out_pad.as_deref(),
            out_shape_attr.as_deref(),
        )?;
        let mut oshape = vec![n, m];
        oshape.extend(&geo.out);
        let mut colshape = ws[1..].to_vec();
        colshape.extend(&xs[2..]);
        let wtshape = [ws[1], c_g, ws[2..].iter().product()];
        crate::tensor::budget::check_together(&[
            (&oshape, 8, 1),
            (&colshape, 8, 1),
            (&wtshape, 8, 1),
        ])?;
        let kprod: usize = ws[2..].iter().product();
        let iprod: usize = xs[2..].iter().product();
        let oprod: usize = geo.out.iter().product();
        let xv = to_f64s(x, "X")?;
        let wv = to_f64s(w, "W")?;
        let bias = match b {
            Some(b) => {
                let v = to_f64s(b, "B")?;
                if v.len() != m {
                    bail!("B has {} values for {m} output channels", v.len());
                }
                v
            }
            None => vec![0.0; m],
        };
        let mut y = vec![0.0f64; n * m * oprod];
        let nd = xs.len() - 2;
        let mut wt = vec![0.0f64; m_g * kprod * c_g];
        let mut col = vec![0.0f64; m_g * kprod * iprod];
        for ni in 0..n {
            for gi in 0..grp {
                // wt[(mi,k), ci] = W[gi*c_g + ci, mi, k]
                for ci in 0..c_g {
                    for r in 0..m_g * kprod {
                        wt[r * c_g + ci] = wv[(gi * c_g + ci) * m_g * kprod + r];
                    }
                }
                let xg = &xv[(ni * c + gi * c_g) * iprod..(ni * c + (gi + 1) * c_g) * iprod];
                f64::gemm(m_g * kprod, c_g, iprod, &wt, xg, &mut col);
                // col2im: scatter-add
                let mut kk = vec![0usize; nd];
                let mut ii = vec![0usize; nd];
                for mi in 0..m_g {
                    let ybase = (ni * m + gi * m_g + mi) * oprod;
                    kk.iter_mut().for_each(|v| *v = 0);
                    for kidx in 0..kprod {
                        let row =
                            &col[(mi * kprod + kidx) * iprod..(mi * kprod + kidx + 1) * iprod];
                        ii.iter_mut().for_each(|v| *v = 0);
                        for &val in row {
                            let mut off = Some(0usize);
                            for d in 0..nd {
                                let p = (ii[d] * geo.strides[d] + kk[d] * geo.dilations[d])
                                    as isize
                                    - geo.pad_begin[d];
                                if p < 0 || p >= geo.out[d] as isize {
                                    off = None;
                                    break;
                                }
                                off = off.map(|o| o * geo.out[d] + p as usize);
                            }
                            if let Some(o) = off {
                                y[ybase + o] += val;
                            }
                            next_index(&mut ii, &xs[2..]);
                        }
                        next_index(&mut kk, &ws[2..]);
                    }
                    for v in &mut y[ybase..ybase + oprod] {
                        *v += bias[gi * m_g + mi];
                    }
                }
            }
        }
        Ok(vec![from_f64s(x.dtype(), &oshape, y)?.into()])
    }))
}

/// Geometry of a transposed convolution.
#[derive(Debug, PartialEq)]
pub struct ConvTGeo {
    pub strides: Vec<usize>,
    pub dilations: Vec<usize>,
    pub pad_begin: Vec<isize>,
    pub out: Vec<usize>,
}

impl ConvTGeo {
    pub fn new(
        sp: &[usize],
        k: &[usize],
        wa: &WindowAttrs,
        out_pad: Option<&[i64]>,
        out_shape: Option<&[i64]>,
    ) -> Result<ConvTGeo, KernelError> {
        let nd = sp.len();
        let get =
            |v: Option<&[i64]>, what: &str, def: i64, min: i64| -> Result<Vec<i64>, KernelError> {
                match v {
                    None => Ok(vec![def; nd]),
                    Some(v) if v.len() == nd => {
                        if v.iter().any(|&x| x < min || x > 1 << 24) {
                            bail!("{what} {v:?} out of range");
                        }
                        Ok(v.to_vec())
                    }
                    Some(v) => bail!("{what} has {} values for {nd} spatial axes", v.len()),
                }
            };
        let s = get(wa.strides.as_deref(), "strides", 1, 1)?;
        let d = get(wa.dilations.as_deref(), "dilations", 1, 1)?;
        let op = get(out_pad, "output_padding", 0, 0)?;
        if let Some(ks) = &wa.kernel {
            if ks.iter().zip(k).any(|(&a, &b)| a != b as i64) {
                bail!("kernel_shape {ks:?} does not match W");
            }
        }
        let mut pb = vec![0i64; nd];
        let mut pe = vec![0i64; nd];
        if let Some(p) = &wa.pads {
            if p.len() != 2 * nd || p.iter().any(|&v| !(0..=1 << 24).contains(&v)) {
                bail!("pads {p:?} are invalid");
            }
            pb.copy_from_slice(&p[..nd]);
            pe.copy_from_slice(&p[nd..]);
        }
        let mut out = vec![0usize; nd];
        for i in 0..nd {
            let ext = (k[i] as i64 - 1) * d[i] + 1;
            let natural = s[i] * (sp[i] as i64 - 1) + op[i] + ext;
            let target = match (out_shape, wa.auto_pad.as_str()) {
                (Some(os), _) => {
                    let os = get(Some(os), "output_shape", 0, 0)?;
                    Some(os[i])
                }
                (None, "SAME_UPPER" | "SAME_LOWER") => Some(sp[i] as i64 * s[i]),
                _ => None,
            };
            if let Some(t) = target {
                // a negative total (output_shape beyond the natural size)
                // extends the output; floor halves as in the spec's formula
                let total = natural - t;
                let half = total.div_euclid(2);
                if wa.auto_pad == "SAME_UPPER" {
                    pb[i] = half;
                    pe[i] = total - half;
                } else {
                    pb[i] = total - half;
                    pe[i] = half;
                }
            }
            let o = natural - pb[i] - pe[i];
            if o < 0 {
                bail!("the output size on spatial axis {i} would be negative");
            }
            out[i] = o as usize;
        }
        Ok(ConvTGeo {
            strides: s.iter().map(|&v| v as usize).collect(),
            dilations: d.iter().map(|&v| v as usize).collect(),
            pad_begin: pb.iter().map(|&v| v as isize).collect(),
            out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernels::sliding_window::tests_support::attrs;

    #[test]
    fn conv_transpose_sizes() {
        let wa = attrs(None, Some(vec![3, 2]));
        let g = ConvTGeo::new(&[3, 3], &[3, 3], &wa, Some(&[1, 1]), None).unwrap();
        assert_eq!(g.out, vec![10, 8]);
        let g = ConvTGeo::new(&[3, 3], &[3, 3], &wa, None, Some(&[10, 8])).unwrap();
        assert_eq!(g.out, vec![10, 8]);
    }
}
