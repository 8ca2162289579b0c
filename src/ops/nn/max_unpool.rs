//! MaxUnpool.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{dim_of, f64_of, num_from_f64, numel, one};
use crate::ops::kernels::manip::{ints_in, strides};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    if cx.has_input(2) {
        let s = cx
            .value(2)
            .map(|v| v.values.iter().cloned().map(Some).collect());
        let s = match s {
            Some(s) => Some(s),
            None => cx.declared_rank(2)?.map(|n| vec![None; n]),
        };
        cx.set_tensor(0, e, s);
        return Ok(());
    }
    let ks = cx.attrs.ints("kernel_shape").unwrap_or_default();
    let nsp = ks.len();
    let pads = cx.attrs.ints("pads").unwrap_or_else(|| vec![0; 2 * nsp]);
    let st = cx.attrs.ints("strides").unwrap_or_else(|| vec![1; nsp]);
    let out = shape_of(cx, 0).and_then(|x| {
        if x.len() != nsp + 2 || pads.len() != 2 * nsp || st.len() != nsp {
            return None;
        }
        let mut o = x[..2].to_vec();
        for i in 0..nsp {
            o.push(x[i + 2].as_ref().map(|d| {
                d.sub(&Expr::int(1))
                    .mul(&Expr::int(st[i]))
                    .add(&Expr::int(ks[i] - pads[i] - pads[i + nsp]))
            }));
        }
        Some(o)
    });
    cx.set_tensor(0, e, out);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
