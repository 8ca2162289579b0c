//! `STFT`: framed DFTs of a [batch, length, 1|2] signal, optionally
//! windowed and one-sided.

use super::fourier::{dft_1d, MAX_LEN};
use super::signal_io::single_int;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let batch = x.as_ref().and_then(|s| s.first().cloned().flatten());
    cx.set_tensor(0, e, Some(vec![batch, None, None, Some(Expr::int(2))]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let onesided = info.attrs.int_or("onesided", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !x.dtype().is_float() {
            bail!("STFT signal must be a float tensor, got {}", x.dtype());
        }
        let sh = x.shape().to_vec();
        if sh.len() != 3 || !(sh[2] == 1 || sh[2] == 2) {
            bail!("STFT signal must have shape [batch, length, 1|2], got {sh:?}");
        }
        let step = single_int(ins, 1, "frame_step")?
            .ok_or_else(|| KernelError::new("frame_step is missing"))?;
        if step <= 0 {
            bail!("frame_step must be positive, got {step}");
        }
        let window = match opt_tensor_in(ins, 2)? {
            Some(w) => {
                if w.rank() != 1 {
                    bail!("window must be 1-D, got shape {:?}", w.shape());
                }
                Some(f64_of(w, "window")?)
            }
            None => None,
        };
        let flen = match (single_int(ins, 3, "frame_length")?, &window) {
            (Some(l), Some(w)) if l as usize != w.len() => {
                bail!(
                    "frame_length {l} differs from the window length {}",
                    w.len()
                )
            }
            (Some(l), _) if l <= 0 => bail!("frame_length must be positive, got {l}"),
            (Some(l), _) => l as usize,
            (None, Some(w)) => w.len(),
            (None, None) => bail!("STFT needs a window or a frame_length"),
        };
        if flen == 0 || flen > MAX_LEN {
            bail!("frame length {flen} is not supported");
        }
        let (b, len, c) = (sh[0], sh[1], sh[2]);
        if flen > len {
            bail!("frame_length {flen} exceeds the signal length {len}");
        }
        let frames = (len - flen) / step as usize + 1;
        let bins = if onesided { flen / 2 + 1 } else { flen };
        let v = f64_of(x, "signal")?;
        let mut out = Vec::with_capacity(b * frames * bins * 2);
        for bi in 0..b {
            for f in 0..frames {
                let start = f * step as usize;
                let w = |t: usize| window.as_ref().map_or(1.0, |w| w[t]);
                let re: Vec<f64> = (0..flen)
                    .map(|t| v[(bi * len + start + t) * c] * w(t))
                    .collect();
                let im: Vec<f64> = (0..flen)
                    .map(|t| {
                        if c == 2 {
                            v[(bi * len + start + t) * c + 1] * w(t)
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let (yr, yi) = dft_1d(&re, &im, flen, false);
                for k in 0..bins {
                    out.push(yr[k]);
                    out.push(yi[k]);
                }
            }
        }
        Ok(vec![Value::Tensor(float_like(
            x,
            &[b, frames, bins, 2],
            out,
        )?)])
    }))
}
