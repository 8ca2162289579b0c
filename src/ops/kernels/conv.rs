//! Convolutions: Conv, ConvTranspose and ConvInteger, N-D with groups,
//! strides, dilations and padding. f32 Conv (and f16/bf16, computed
//! through f32) runs on the packed AVX-512 or AVX2 kernels of `conv_f32` where the
//! CPU has them; otherwise, and for f64 and ConvInteger (through f64, exact
//! for its value range), Conv is im2col + GEMM per (image, group), parallel
//! over images/groups with rayon; 1x1 stride-1 unpadded convolutions skip
//! im2col.

use super::conv_epilogue::{Act, Epilogue, RESIDUAL_INPUT};
use super::conv_f32::{self, ConvDims};
use super::f64_values::from_f64s;
use super::matrix_product::Gemm;
use super::sliding_window::{next_index, Window, WindowAttrs};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Tensor, Value};
use ndarray::{ArrayD, IxDyn};
use rayon::prelude::*;

/// Floats the convolution core runs on.
pub trait ConvFloat: Gemm + Send + Sync + std::ops::AddAssign {}
impl ConvFloat for f32 {}
impl ConvFloat for f64 {}

/// Shapes and geometry of one convolution.
pub(crate) struct Geo {
    pub(crate) n: usize,
    pub(crate) c: usize,
    pub(crate) m: usize,
    pub(crate) group: usize,
    pub(crate) spatial: Vec<usize>,
    pub(crate) w: Window,
}

/// Fills `col` (rows: channel x kernel offset, columns: output positions)
/// from one image's channels `x` (c_g planes).
fn im2col<T: ConvFloat>(x: &[T], c_g: usize, sp: &[usize], w: &Window, col: &mut [T]) {
    let nd = sp.len();
    let kprod: usize = w.kernel.iter().product();
    let oprod: usize = w.out.iter().product();
    let plane: usize = sp.iter().product();
    let last_o = *w.out.last().unwrap_or(&1);
    let outer_o = w.out[..nd.saturating_sub(1)].to_vec();
    let mut kk = vec![0usize; nd];
    let mut oo = vec![0usize; nd.saturating_sub(1)];
    for ci in 0..c_g {
        let xp = &x[ci * plane..(ci + 1) * plane];
        kk.iter_mut().for_each(|v| *v = 0);
        for kidx in 0..kprod {
            let row = &mut col[(ci * kprod + kidx) * oprod..(ci * kprod + kidx + 1) * oprod];
            oo.iter_mut().for_each(|v| *v = 0);
            let mut pos = 0;
            loop {
                // offset of the leading axes, or None when in the padding
                let mut off = Some(0usize);
                for i in 0..nd - 1 {
                    let p = (oo[i] * w.strides[i] + kk[i] * w.dilations[i]) as isize
                        - w.pad_begin[i] as isize;
                    if p < 0 || p >= sp[i] as isize {
                        off = None;
                        break;
                    }
                    off = off.map(|o| o * sp[i] + p as usize);
                }
                let seg = &mut row[pos..pos + last_o];
                match off {
                    None => seg.iter_mut().for_each(|v| *v = T::zero()),
                    Some(o) => {
                        let l = nd - 1;
                        let base = o * sp[l];
                        let (s, d, pb, len) = (
                            w.strides[l],
                            w.dilations[l],
                            w.pad_begin[l] as isize,
                            sp[l] as isize,
                        );
                        let k = (kk[l] * d) as isize - pb;
                        if s == 1 {
                            for (j, v) in seg.iter_mut().enumerate() {
                                let p = j as isize + k;
                                *v = if p >= 0 && p < len {
                                    xp[base + p as usize]
                                } else {
                                    T::zero()
                                };
                            }
                        } else {
                            for (j, v) in seg.iter_mut().enumerate() {
                                let p = (j * s) as isize + k;
                                *v = if p >= 0 && p < len {
                                    xp[base + p as usize]
                                } else {
                                    T::zero()
                                };
                            }
                        }
                    }
                }
                pos += last_o;
                if nd < 2 || !next_index(&mut oo, &outer_o) {
                    break;
                }
            }
            next_index(&mut kk, &w.kernel);
        }
    }
}

/// Convolution of `x` (N x C x spatial) with `wt` (M x C/group x kernel),
/// plus an optional bias of M values; row-major output N x M x out.
pub(crate) fn conv_core<T: ConvFloat>(x: &[T], wt: &[T], bias: Option<&[T]>, g: &Geo) -> Vec<T> {
    let c_g = g.c / g.group;
    let m_g = g.m / g.group;
    let kprod: usize = g.w.kernel.iter().product();
    let oprod: usize = g.w.out.iter().product();
    let plane: usize = g.spatial.iter().product();
    let kdim = c_g * kprod;
    let direct = kprod == 1
        && g.w.strides.iter().all(|&s| s == 1)
        && g.w.pad_begin.iter().chain(&g.w.pad_end).all(|&p| p == 0);
    let mut out = vec![T::zero(); g.n * g.m * oprod];
    let jobs = g.n * g.group;
    let work = |job: usize, dst: &mut [T], col: &mut Vec<T>| {
        let (ni, gi) = (job / g.group, job % g.group);
        let xs = &x[(ni * g.c + gi * c_g) * plane..(ni * g.c + (gi + 1) * c_g) * plane];
        let ws = &wt[gi * m_g * kdim..(gi + 1) * m_g * kdim];
        let b: &[T] = if direct {
            xs
        } else {
            col.resize(kdim * oprod, T::zero());
            im2col(xs, c_g, &g.spatial, &g.w, col);
            col
        };
        T::gemm(m_g, kdim, oprod, ws, b, dst);
        if let Some(bias) = bias {
            for (mi, row) in dst.chunks_mut(oprod.max(1)).enumerate() {
                let bv = bias[gi * m_g + mi];
                row.iter_mut().for_each(|v| *v += bv);
            }
        }
    };
    let chunk = m_g * oprod;
    if chunk == 0 {
        return out;
    }
    if jobs > 1 && super::threads::current() > 1 {
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each_init(Vec::new, |col, (job, dst)| work(job, dst, col));
    } else {
        let mut col = Vec::new();
        for (job, dst) in out.chunks_mut(chunk).enumerate() {
            work(job, dst, &mut col);
        }
    }
    out
}

/// f32 convolution: the fast kernels where available, else `conv_core`.
fn conv_f32s(
    x: &[f32],
    wt: &[f32],
    bias: Option<&[f32]>,
    g: &Geo,
    post: Option<&Epilogue>,
    res: Option<&[f32]>,
) -> Vec<f32> {
    let dims = ConvDims {
        n: g.n,
        c: g.c,
        m: g.m,
        group: g.group,
        spatial: &g.spatial,
        kernel: &g.w.kernel,
        strides: &g.w.strides,
        dilations: &g.w.dilations,
        pad_begin: &g.w.pad_begin,
        out: &g.w.out,
    };
    let oprod: usize = g.w.out.iter().product();
    if super::conv_single_position::applies(&dims) {
        return super::conv_single_position::conv_with(x, wt, bias, &dims, post, res);
    }
    if super::conv_depthwise::applies(&dims) {
        return super::conv_depthwise::conv_with(x, wt, bias, &dims, post, res);
    }
    conv_f32::conv_with(x, wt, bias, &dims, post, res).unwrap_or_else(|| {
        let mut y = conv_core(x, wt, bias, g);
        if let Some(p) = post {
            p.apply_all_f32(g.m, oprod, &mut y, res);
        }
        y
    })
}

/// Checks shapes and resolves the geometry of a Conv / ConvInteger.
pub(crate) fn conv_geo(
    xs: &[usize],
    ws: &[usize],
    wa: &WindowAttrs,
    group: i64,
) -> Result<Geo, KernelError> {
    if xs.len() < 3 || ws.len() != xs.len() {
        bail!("Conv needs X of rank >= 3 and W of the same rank, got {xs:?} and {ws:?}");
    }
    if group < 1 {
        bail!("group must be positive, got {group}");
    }
    let group = group as usize;
    let (n, c, m) = (xs[0], xs[1], ws[0]);
    if c % group != 0 || m % group != 0 || ws[1] * group != c {
        bail!("channels do not match: X {xs:?}, W {ws:?}, group {group}");
    }
    if ws[2..].contains(&0) {
        bail!("the kernel shape {ws:?} has a zero axis");
    }
    if let Some(k) = &wa.kernel {
        if k.iter().zip(&ws[2..]).any(|(&a, &b)| a != b as i64) {
            bail!("kernel_shape {k:?} does not match W {ws:?}");
        }
    }
    let w = wa.resolve(&xs[2..], Some(&ws[2..]))?;
    let mut oshape = vec![n, m];
    oshape.extend(&w.out);
    let mut col = vec![ws[1]];
    col.extend(&ws[2..]);
    col.extend(&w.out);
    // The output and one im2col buffer per worker thread live together.
    crate::tensor::budget::check_together(&[
        (&oshape, 8, 1),
        (&col, 8, crate::ops::kernels::threads::current()),
    ])?;
    Ok(Geo {
        n,
        c,
        m,
        group,
        spatial: xs[2..].to_vec(),
        w,
    })
}

pub(crate) fn f32s(t: &Tensor) -> Result<Vec<f32>, KernelError> {
    Ok(match t {
        Tensor::F32(a) => a.iter().copied().collect(),
        Tensor::F16(a) => a.iter().map(|v| v.to_f32()).collect(),
        Tensor::BF16(a) => a.iter().map(|v| v.to_f32()).collect(),
        other => bail!("expected a float tensor, got {}", other.dtype()),
    })
}

pub(crate) fn out_shape(g: &Geo, m: usize) -> Vec<usize> {
    let mut s = vec![g.n, m];
    s.extend(&g.w.out);
    s
}

/// Conv followed by `post` (a plan-time fusion, see `runtime::passes`):
/// applied per output tile on the fast f32 path, per output row elsewhere.
pub fn conv_fused(info: &NodeInfo, post: Option<Epilogue>) -> Result<Kernel, KernelError> {
    let wa = WindowAttrs::from_info(info);
    let group = info.attrs.int_or("group", 1);
    let post = post.filter(|p| !p.is_identity());
    if let Some((s, t)) = post.as_ref().and_then(|p| p.affine.as_ref()) {
        if s.len() != t.len() {
            bail!("internal: fused scale and shift differ in length");
        }
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let w = tensor_in(ins, 1)?;
        let mut b = opt_tensor_in(ins, 2)?;
        if x.dtype() != w.dtype() || b.is_some_and(|b| b.dtype() != x.dtype()) {
            bail!("Conv operands must have one element type");
        }
        let g = conv_geo(x.shape(), w.shape(), &wa, group)?;
        if let Some(b) = b {
            if b.len() != g.m {
                bail!("B has {} values for {} output channels", b.len(), g.m);
            }
        }
        if let Some((s, _)) = post.as_ref().and_then(|p| p.affine.as_ref()) {
            if s.len() != g.m {
                bail!(
                    "the fused BatchNormalization has {} channels, the Conv {}",
                    s.len(),
                    g.m
                );
            }
        }
        let derived;
        let post = match post.as_ref() {
            Some(p) if p.bn_eps.is_some() => {
                derived = runtime_batchnorm(ins, p, b, g.m)?;
                // the Conv bias is inside the derived shift
                b = None;
                Some(&derived)
            }
            other => other,
        };
        let oshape = out_shape(&g, g.m);
        let residual = match post {
            Some(p) if p.residual => {
                let r = tensor_in(ins, RESIDUAL_INPUT)?;
                if r.dtype() != x.dtype() {
                    bail!(
                        "the fused Add's other operand is {}, the Conv output {}",
                        r.dtype(),
                        x.dtype()
                    );
                }
                Some(r)
            }
            _ => None,
        };
        if let (Some(p), Some(r)) = (post, residual) {
            if r.shape() != oshape.as_slice() {
                // a broadcasting Add: the Conv and its affine map, then the
                // Add and the activation as written
                let inner = Epilogue {
                    act: Act::None,
                    residual: false,
                    ..p.clone()
                };
                let y = conv_run(x, w, b, &g, Some(&inner), None, &oshape)?;
                return Ok(vec![Value::Tensor(add_then_act(&y, r, p.act)?)]);
            }
        }
        let y = conv_run(x, w, b, &g, post, residual, &oshape)?;
        Ok(vec![Value::Tensor(y)])
    }))
}

/// One convolution of X by W (+ B) with the epilogue `post`, whose
/// residual (if any) `res` has the output's shape and X's type.
fn conv_run(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    g: &Geo,
    post: Option<&Epilogue>,
    res: Option<&Tensor>,
    oshape: &[usize],
) -> Result<Tensor, KernelError> {
    let oprod: usize = g.w.out.iter().product();
    Ok(match x {
        Tensor::F64(xa) => {
            let xv = xa.as_standard_layout();
            let wv = super::typed::<f64>(w, "W")?.as_standard_layout();
            let bv: Option<Vec<f64>> = b.map(|b| b.to_f64_vec().unwrap_or_default());
            let (Some(xs), Some(ws)) = (xv.as_slice(), wv.as_slice()) else {
                bail!("internal: non-contiguous buffer");
            };
            let mut y = conv_core(xs, ws, bv.as_deref(), g);
            if let Some(p) = post {
                let rv = res.map(|r| r.to_f64_vec().unwrap_or_default());
                p.apply_all_f64(g.m, oprod, &mut y, rv.as_deref());
            }
            Tensor::F64(ArrayD::from_shape_vec(IxDyn(oshape), y)?)
        }
        Tensor::F32(xa) => {
            let xv = xa.as_standard_layout();
            let wv = super::typed::<f32>(w, "W")?.as_standard_layout();
            let bv = match b {
                Some(b) => Some(f32s(b)?),
                None => None,
            };
            let (Some(xs), Some(ws)) = (xv.as_slice(), wv.as_slice()) else {
                bail!("internal: non-contiguous buffer");
            };
            let rv = match res {
                Some(Tensor::F32(r)) => Some(r.as_standard_layout()),
                _ => None,
            };
            let rs = rv.as_ref().and_then(|r| r.as_slice());
            Tensor::F32(ArrayD::from_shape_vec(
                IxDyn(oshape),
                conv_f32s(xs, ws, bv.as_deref(), g, post, rs),
            )?)
        }
        Tensor::F16(_) | Tensor::BF16(_) => {
            let bv = match b {
                Some(b) => Some(f32s(b)?),
                None => None,
            };
            let rv = match res {
                Some(r) => Some(f32s(r)?),
                None => None,
            };
            let y = conv_f32s(&f32s(x)?, &f32s(w)?, bv.as_deref(), g, post, rv.as_deref());
            from_f64s(x.dtype(), oshape, y.into_iter().map(|v| v as f64).collect())?
        }
        other => bail!("Conv does not accept {}", other.dtype()),
    })
}

/// `act(y + r)` with `r` broadcast (numpy rules) against `y`, computed in
/// float64 and stored in `y`'s type.
fn add_then_act(y: &Tensor, r: &Tensor, act: Act) -> Result<Tensor, KernelError> {
    let shape = super::broadcast_shapes(y.shape(), r.shape())?;
    crate::tensor::budget::check(&shape, 8)?;
    let (Some(yv), Some(rv)) = (y.to_f64_vec(), r.to_f64_vec()) else {
        bail!("the fused Add needs float operands");
    };
    let ya = ArrayD::from_shape_vec(IxDyn(y.shape()), yv)?;
    let ra = ArrayD::from_shape_vec(IxDyn(r.shape()), rv)?;
    let (Some(yb), Some(rb)) = (ya.broadcast(IxDyn(&shape)), ra.broadcast(IxDyn(&shape))) else {
        bail!(
            "the fused Add cannot broadcast {:?} with {:?}",
            y.shape(),
            r.shape()
        );
    };
    let sum: Vec<f64> = yb
        .iter()
        .zip(rb.iter())
        .map(|(&a, &b)| act.f64(a + b))
        .collect();
    from_f64s(y.dtype(), &shape, sum)
}

/// The epilogue of a Conv fused with a BatchNormalization whose parameters
/// are inputs 3 to 6 (see `Epilogue::bn_eps`).
fn runtime_batchnorm(
    ins: &[Option<&Value>],
    p: &Epilogue,
    bias: Option<&Tensor>,
    m: usize,
) -> Result<Epilogue, KernelError> {
    let eps = p.bn_eps.unwrap_or(1e-5) as f64;
    let mut params = Vec::with_capacity(4);
    for (k, what) in [(3, "scale"), (4, "B"), (5, "input_mean"), (6, "input_var")] {
        let t = tensor_in(ins, k)?;
        let v = t.to_f64_vec().filter(|v| v.len() == m).ok_or_else(|| {
            KernelError::new(format!(
                "the fused BatchNormalization's {what} must be {m} floats, got {} {:?}",
                t.dtype(),
                t.shape()
            ))
        })?;
        params.push(v);
    }
    let cb = match bias {
        Some(b) => Some(b.to_f64_vec().ok_or_else(|| {
            KernelError::new(format!(
                "Conv bias must be a float tensor, got {}",
                b.dtype()
            ))
        })?),
        None => None,
    };
    let (s, t) = super::conv_epilogue::batchnorm_affine(
        &params[0],
        &params[1],
        &params[2],
        &params[3],
        eps,
        cb.as_deref(),
    );
    Ok(Epilogue {
        affine: Some((s, t)),
        act: p.act,
        bn_eps: None,
        residual: p.residual,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernels::sliding_window::tests_support::attrs;

    /// Direct definition of a 2-D convolution, for comparison.
    fn naive(
        x: &[f64],
        xs: [usize; 4],
        w: &[f64],
        ws: [usize; 4],
        pad: usize,
        s: usize,
        group: usize,
    ) -> Vec<f64> {
        let oh = (xs[2] + 2 * pad - ws[2]) / s + 1;
        let ow = (xs[3] + 2 * pad - ws[3]) / s + 1;
        let c_g = xs[1] / group;
        let m_g = ws[0] / group;
        let mut y = vec![0.0; xs[0] * ws[0] * oh * ow];
        for n in 0..xs[0] {
            for m in 0..ws[0] {
                let g = m / m_g;
                for i in 0..oh {
                    for j in 0..ow {
                        let mut acc = 0.0;
                        for c in 0..c_g {
                            for a in 0..ws[2] {
                                for b in 0..ws[3] {
                                    let h = (i * s + a) as isize - pad as isize;
                                    let v = (j * s + b) as isize - pad as isize;
                                    if h >= 0
                                        && v >= 0
                                        && (h as usize) < xs[2]
                                        && (v as usize) < xs[3]
                                    {
                                        let xi = ((n * xs[1] + g * c_g + c) * xs[2] + h as usize)
                                            * xs[3]
                                            + v as usize;
                                        acc += x[xi] * w[((m * c_g + c) * ws[2] + a) * ws[3] + b];
                                    }
                                }
                            }
                        }
                        y[((n * ws[0] + m) * oh + i) * ow + j] = acc;
                    }
                }
            }
        }
        y
    }

    #[test]
    fn im2col_conv_matches_direct_definition() {
        let xs = [2, 4, 5, 6];
        let ws = [6, 2, 3, 2];
        let x: Vec<f64> = (0..xs.iter().product::<usize>())
            .map(|i| ((i * 7) % 11) as f64 - 5.0)
            .collect();
        let w: Vec<f64> = (0..ws.iter().product::<usize>())
            .map(|i| ((i * 3) % 5) as f64 - 2.0)
            .collect();
        for (pad, s) in [(0, 1), (1, 2), (2, 1)] {
            let wa = attrs(Some(vec![pad as i64; 4]), Some(vec![s as i64; 2]));
            let g = conv_geo(&xs, &ws, &wa, 2).unwrap();
            let got = conv_core(&x, &w, None, &g);
            assert_eq!(
                got,
                naive(&x, xs, &w, ws, pad, s, 2),
                "pad {pad} stride {s}"
            );
        }
    }

    #[test]
    fn bad_group_is_an_error() {
        let wa = attrs(None, None);
        assert!(conv_geo(&[1, 3, 4, 4], &[2, 3, 1, 1], &wa, 2).is_err());
        assert!(conv_geo(&[1, 3, 4, 4], &[2, 3, 1, 1], &wa, 0).is_err());
    }
}
