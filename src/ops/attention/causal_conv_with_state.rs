//! `CausalConvWithState`: a depthwise causal 1-D convolution carrying its
//! state between calls.

use super::attention_values::{dim, float_vals, numel, same_float, sigmoid};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;

/// CausalConvWithState: output like input, present_state (B, C, k-1).
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(r) = cx.rank(0) {
        if r != 3 {
            shape_bail!("CausalConvWithState: input must be 3-D, got rank {r}");
        }
    }
    same_float(cx, "CausalConvWithState")?;
    if cx.num_outputs() > 1 {
        let e = cx.elem_req(0)?;
        let k1 = dim(cx, 1, 2).map(|k| k.sub(&Expr::int(1)));
        cx.set_tensor(1, e, Some(vec![dim(cx, 0, 0), dim(cx, 0, 1), k1]));
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let act = info.attrs.string_or("activation", "none");
    let silu = match act.as_str() {
        "silu" | "swish" => true,
        "none" => false,
        a => bail!("CausalConvWithState: unknown activation '{a}'"),
    };
    Ok(Box::new(move |_, ins| {
        let (xt, xv) = float_vals(ins, 0, "CausalConvWithState")?;
        let (wt, wv) = float_vals(ins, 1, "CausalConvWithState")?;
        if xt.rank() != 3 {
            bail!(
                "CausalConvWithState: input must be 3-D, got {:?}",
                xt.shape()
            );
        }
        let (b, c, l) = (xt.shape()[0], xt.shape()[1], xt.shape()[2]);
        if wt.rank() != 3 || wt.shape()[0] != c || wt.shape()[1] != 1 || wt.shape()[2] == 0 {
            bail!(
                "CausalConvWithState: weight must have shape [{c}, 1, k>=1], got {:?}",
                wt.shape()
            );
        }
        let k = wt.shape()[2];
        let bias = match opt_tensor_in(ins, 2)? {
            Some(t) => {
                if t.shape() != [c] {
                    bail!(
                        "CausalConvWithState: bias must have shape [{c}], got {:?}",
                        t.shape()
                    );
                }
                to_f64s(t, "bias")?
            }
            None => vec![0.0; c],
        };
        let past = match opt_tensor_in(ins, 3)? {
            Some(t) => {
                if t.shape() != [b, c, k - 1] {
                    bail!(
                        "CausalConvWithState: past_state must have shape [{b}, {c}, {}], got {:?}",
                        k - 1,
                        t.shape()
                    );
                }
                to_f64s(t, "past_state")?
            }
            None => vec![0.0; numel(&[b, c, k - 1])?],
        };
        let mut out = vec![0.0; xv.len()];
        let mut present = vec![0.0; past.len()];
        let mut seq = vec![0.0; k - 1 + l];
        for bi in 0..b {
            for ci in 0..c {
                let row = bi * c + ci;
                seq[..k - 1].copy_from_slice(&past[row * (k - 1)..(row + 1) * (k - 1)]);
                seq[k - 1..].copy_from_slice(&xv[row * l..(row + 1) * l]);
                let w = &wv[ci * k..(ci + 1) * k];
                for t in 0..l {
                    let mut acc = bias[ci];
                    for (kk, wk) in w.iter().enumerate() {
                        acc += wk * seq[t + kk];
                    }
                    if silu {
                        acc *= sigmoid(acc);
                    }
                    out[row * l + t] = acc;
                }
                present[row * (k - 1)..(row + 1) * (k - 1)].copy_from_slice(&seq[l..]);
            }
        }
        Ok(vec![
            from_f64s(xt.dtype(), &[b, c, l], out)?.into(),
            from_f64s(xt.dtype(), &[b, c, k - 1], present)?.into(),
        ])
    }))
}
