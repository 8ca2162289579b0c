//! `RotaryEmbedding`: rotary position embedding of the input's halves
//! (or interleaved pairs).

use super::attention_values::{float_vals, same_float};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::from_f64s;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(r) = cx.rank(0) {
        if r != 3 && r != 4 {
            shape_bail!("RotaryEmbedding: X must be 3-D or 4-D, got rank {r}");
        }
    }
    same_float(cx, "RotaryEmbedding")
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let interleaved = info.attrs.int_or("interleaved", 0) != 0;
    let num_heads = info
        .attrs
        .int("num_heads")
        .and_then(|x| usize::try_from(x).ok());
    let rot_attr = info.attrs.int_or("rotary_embedding_dim", 0);
    if rot_attr < 0 {
        bail!("RotaryEmbedding: rotary_embedding_dim must be >= 0, got {rot_attr}");
    }
    Ok(Box::new(move |_, ins| {
        let (xt, xv) = float_vals(ins, 0, "RotaryEmbedding")?;
        let (ct, cv) = float_vals(ins, 1, "RotaryEmbedding")?;
        let (st, sv) = float_vals(ins, 2, "RotaryEmbedding")?;
        if ct.shape() != st.shape() {
            bail!(
                "RotaryEmbedding: cos_cache {:?} and sin_cache {:?} differ",
                ct.shape(),
                st.shape()
            );
        }
        // (B, S, H, D) view of X through index arithmetic.
        let sh = xt.shape();
        let (b, s, h, d, four) = match sh.len() {
            4 => (sh[0], sh[2], sh[1], sh[3], true),
            3 => {
                let h = match num_heads {
                    Some(h) if h > 0 => h,
                    _ => bail!("RotaryEmbedding: 3-D input needs a positive num_heads"),
                };
                if sh[2] % h != 0 {
                    bail!(
                        "RotaryEmbedding: hidden size {} is not a multiple of {h}",
                        sh[2]
                    );
                }
                (sh[0], sh[1], h, sh[2] / h, false)
            }
            r => bail!("RotaryEmbedding: X must be 3-D or 4-D, got rank {r}"),
        };
        let rd = if rot_attr == 0 { d } else { rot_attr as usize };
        if rd > d || rd % 2 != 0 {
            bail!("RotaryEmbedding: rotary dimension {rd} must be even and at most {d}");
        }
        let half = rd / 2;
        let cs = ct.shape();
        if cs.last() != Some(&half) {
            bail!("RotaryEmbedding: cache last dimension must be {half}, got {cs:?}");
        }
        // Row of the caches for (batch, position).
        let pos = match opt_tensor_in(ins, 3)? {
            Some(p) => {
                if p.shape() != [b, s] {
                    bail!(
                        "RotaryEmbedding: position_ids must have shape [{b}, {s}], got {:?}",
                        p.shape()
                    );
                }
                if cs.len() != 2 {
                    bail!("RotaryEmbedding: caches must be 2-D with position_ids");
                }
                let ids = p.to_i64_vec()?;
                let mut rows = Vec::with_capacity(ids.len());
                for id in ids {
                    match usize::try_from(id) {
                        Ok(r) if r < cs[0] => rows.push(r),
                        _ => bail!(
                            "RotaryEmbedding: position id {id} out of range [0, {})",
                            cs[0]
                        ),
                    }
                }
                rows
            }
            None => {
                if cs != [b, s, half] {
                    bail!("RotaryEmbedding: caches must have shape [{b}, {s}, {half}] without position_ids, got {cs:?}");
                }
                (0..b * s).collect()
            }
        };
        let mut out = xv.clone();
        for bi in 0..b {
            for si in 0..s {
                let r = pos[bi * s + si] * half;
                for hi in 0..h {
                    let base = if four {
                        ((bi * h + hi) * s + si) * d
                    } else {
                        ((bi * s + si) * h + hi) * d
                    };
                    for t in 0..half {
                        let (i1, i2) = if interleaved {
                            (base + 2 * t, base + 2 * t + 1)
                        } else {
                            (base + t, base + t + half)
                        };
                        let (c, sn) = (cv[r + t], sv[r + t]);
                        let (x1, x2) = (xv[i1], xv[i2]);
                        out[i1] = c * x1 - sn * x2;
                        out[i2] = sn * x1 + c * x2;
                    }
                }
            }
        }
        Ok(vec![from_f64s(xt.dtype(), sh, out)?.into()])
    }))
}
