//! MaxUnpool.

use super::f64_values::{dim_of, f64_of, num_from_f64, numel, one};
use super::manip::{ints_in, strides};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};

pub fn max_unpool(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let ks = info
        .attrs
        .ints("kernel_shape")
        .ok_or_else(|| KernelError::new("MaxUnpool needs kernel_shape"))?;
    let nsp = ks.len();
    let pads = info.attrs.ints("pads").unwrap_or_else(|| vec![0; 2 * nsp]);
    let strides_a = info.attrs.ints("strides").unwrap_or_else(|| vec![1; nsp]);
    if pads.len() != 2 * nsp || strides_a.len() != nsp {
        bail!("MaxUnpool pads/strides do not match kernel_shape");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let idx = tensor_in(ins, 1)?;
        if idx.shape() != x.shape() {
            bail!(
                "I shape {:?} differs from X shape {:?}",
                idx.shape(),
                x.shape()
            );
        }
        if x.rank() != nsp + 2 {
            bail!("X must have rank {}, got {}", nsp + 2, x.rank());
        }
        let mut default = x.shape()[..2].to_vec();
        for i in 0..nsp {
            let d = (x.shape()[i + 2] as i64 - 1) * strides_a[i] + ks[i] - pads[i] - pads[i + nsp];
            default.push(dim_of(d, "output size")?);
        }
        let out_shape: Vec<usize> = match opt_tensor_in(ins, 2)? {
            Some(_) => {
                let s = ints_in(ins, 2)?;
                s.iter()
                    .map(|&d| dim_of(d, "output_shape"))
                    .collect::<Result<_, _>>()?
            }
            None => default.clone(),
        };
        if out_shape.len() != x.rank() {
            bail!("output_shape must have {} values", x.rank());
        }
        let total = numel(&out_shape)?;
        let dtotal = numel(&default)?;
        let dst = strides(&default);
        let ost = strides(&out_shape);
        let iv = idx.to_i64_vec()?;
        let xv = f64_of(x, "X")?;
        let mut out = vec![0.0; total];
        for (k, &i) in iv.iter().enumerate() {
            if i < 0 || i as usize >= dtotal {
                bail!("index {i} is out of range for the unpooled size {dtotal}");
            }
            // Indices address the default unpooled shape; place each value
            // at the same coordinates of the requested output shape.
            let mut rem = i as usize;
            let mut at = 0;
            for a in 0..default.len() {
                let c = rem / dst[a];
                rem %= dst[a];
                if c >= out_shape[a] {
                    bail!("index {i} falls outside output_shape {out_shape:?}");
                }
                at += c * ost[a];
            }
            out[at] = xv[k];
        }
        one(num_from_f64(x.dtype(), &out_shape, out)?)
    }))
}
