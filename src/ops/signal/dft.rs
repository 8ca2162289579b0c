//! `DFT`: the discrete Fourier transform along one axis (input 2; DFT-17's
//! axis attribute is moved there by `graph::upgrade`); `onesided` and
//! `inverse` (irfft) as the spec says.

use super::fourier::{dft_1d, MAX_LEN};
use super::signal_io::single_int;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let Some(mut s) = shape_of(cx, 0) else {
        cx.set_tensor(0, e, None);
        return Ok(());
    };
    let r = s.len();
    if r < 2 {
        return Err(ShapeError::new("DFT input needs rank >= 2"));
    }
    // DFT-17's axis attribute is upgraded by `graph::upgrade` to input 2
    let axis = if cx.has_input(2) {
        match cx.ints(2).and_then(|v| v.first().copied()) {
            Some(a) => a,
            None => {
                cx.set_tensor(0, e, Some(vec![None; r]));
                return Ok(());
            }
        }
    } else {
        -2
    };
    let ax = if axis < 0 { axis + r as i64 } else { axis };
    if ax < 0 || ax >= r as i64 - 1 {
        return Err(ShapeError::new(format!("DFT axis {axis} is out of range")));
    }
    let ax = ax as usize;
    let onesided = cx.attrs.int_or("onesided", 0) != 0;
    let inverse = cx.attrs.int_or("inverse", 0) != 0;
    // an inverse of a one-sided spectrum (irfft) rebuilds the full length
    // 2*(n-1) and gives a real signal
    let half_input = onesided && inverse;
    let len: Dim = if cx.has_input(1) {
        cx.value(1).and_then(|v| v.values.first().cloned())
    } else if half_input {
        s[ax]
            .clone()
            .map(|n| n.sub(&Expr::int(1)).mul(&Expr::int(2)))
    } else {
        s[ax].clone()
    };
    s[ax] = if onesided && !inverse {
        len.map(|l| l.floor_div(&Expr::int(2)).add(&Expr::int(1)))
    } else {
        len
    };
    s[r - 1] = Some(Expr::int(if half_input { 1 } else { 2 }));
    cx.set_tensor(0, e, Some(s));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let inverse = info.attrs.int_or("inverse", 0) != 0;
    let onesided = info.attrs.int_or("onesided", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("DFT input must be a float tensor, got {}", x.dtype());
        }
        let sh = x.shape().to_vec();
        let r = sh.len();
        if r < 2 || !(sh[r - 1] == 1 || sh[r - 1] == 2) {
            bail!("DFT input must have a last dimension of 1 or 2, got shape {sh:?}");
        }
        let axis = single_int(ins, 2, "axis")?.unwrap_or(-2);
        let ax = if axis < 0 { axis + r as i64 } else { axis };
        if ax < 0 || ax >= r as i64 - 1 {
            bail!("DFT axis {axis} is out of range for rank {r}");
        }
        let ax = ax as usize;
        let n_in = sh[ax];
        let complex = sh[r - 1] == 2;
        let half_input = inverse && onesided;
        let n = match single_int(ins, 1, "dft_length")? {
            Some(l) if l <= 0 => bail!("dft_length must be positive, got {l}"),
            Some(l) => l as usize,
            None if half_input => 2 * n_in.saturating_sub(1),
            None => n_in,
        };
        if n == 0 || n > MAX_LEN {
            bail!("DFT length {n} is not supported");
        }
        let out_n = if onesided && !inverse { n / 2 + 1 } else { n };
        let out_c = if half_input { 1 } else { 2 };
        let v = f64_of(x, "input")?;
        let outer: usize = sh[..ax].iter().product();
        let inner: usize = sh[ax + 1..r - 1].iter().product();
        let c = sh[r - 1];
        let mut out_shape = sh.clone();
        out_shape[ax] = out_n;
        out_shape[r - 1] = out_c;
        let total = outer
            .checked_mul(out_n)
            .and_then(|t| t.checked_mul(inner))
            .and_then(|t| t.checked_mul(out_c))
            .filter(|&t| t <= 1 << 31)
            .ok_or_else(|| KernelError::new("DFT output is too large"))?;
        let mut out = vec![0.0; total];
        for o in 0..outer {
            for i in 0..inner {
                let at = |t: usize| ((o * n_in + t) * inner + i) * c;
                let mut re: Vec<f64> = (0..n_in).map(|t| v[at(t)]).collect();
                let mut im: Vec<f64> = (0..n_in)
                    .map(|t| if complex { v[at(t) + 1] } else { 0.0 })
                    .collect();
                if half_input {
                    // Rebuild the full spectrum by Hermitian symmetry.
                    let mut fr = vec![0.0; n];
                    let mut fi = vec![0.0; n];
                    for k in 0..n {
                        if k < n_in {
                            fr[k] = re[k];
                            fi[k] = im[k];
                        } else if n - k < n_in {
                            fr[k] = re[n - k];
                            fi[k] = -im[n - k];
                        }
                    }
                    re = fr;
                    im = fi;
                }
                let (yr, yi) = dft_1d(&re, &im, n, inverse);
                for k in 0..out_n {
                    let d = ((o * out_n + k) * inner + i) * out_c;
                    out[d] = yr[k];
                    if out_c == 2 {
                        out[d + 1] = yi[k];
                    }
                }
            }
        }
        Ok(vec![Value::Tensor(float_like(x, &out_shape, out)?)])
    }))
}
