//! `LinearAttention`: recurrent linear attention with its state.

use super::attention_values::{attr_dim, check_float, dim, div, float_vals, mul, numel};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::{InferCtx, ShapeError};

/// LinearAttention: output (B, T, Hq*Dv), present_state (B, Hkv, Dk, Dv).
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let qe = check_float(cx, 0, "LinearAttention")?;
    let hq = attr_dim(cx, "q_num_heads");
    let hkv = attr_dim(cx, "kv_num_heads");
    let dk = div(&dim(cx, 0, 2), &hq);
    let dv = div(&dim(cx, 2, 2), &hkv);
    let y = vec![dim(cx, 0, 0), dim(cx, 0, 1), mul(&hq, &dv)];
    cx.set_tensor(0, qe, Some(y));
    if cx.num_outputs() > 1 {
        let se = if cx.has_input(3) { cx.elem_req(3)? } else { qe };
        cx.set_tensor(1, se, Some(vec![dim(cx, 0, 0), hkv, dk, dv]));
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let hq = info.attrs.int("q_num_heads");
    let hkv = info.attrs.int("kv_num_heads");
    let (hq, hkv) = match (hq, hkv) {
        (Some(a), Some(b)) if a > 0 && b > 0 && a % b == 0 => (a as usize, b as usize),
        _ => bail!(
            "LinearAttention: q_num_heads and kv_num_heads must be positive, q a multiple of kv"
        ),
    };
    let scale_attr = info.attrs.float_or("scale", 0.0) as f64;
    let rule = info.attrs.string_or("update_rule", "gated_delta");
    let (gated, delta) = match rule.as_str() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        r => bail!("LinearAttention: unknown update_rule '{r}'"),
    };
    Ok(Box::new(move |_, ins| {
        let (qt, qv) = float_vals(ins, 0, "LinearAttention")?;
        let (kt, kv) = float_vals(ins, 1, "LinearAttention")?;
        let (vt, vv) = float_vals(ins, 2, "LinearAttention")?;
        for t in [qt, kt, vt] {
            if t.rank() != 3 {
                bail!(
                    "LinearAttention: query, key and value must be 3-D, got {:?}",
                    t.shape()
                );
            }
        }
        let (b, tl) = (qt.shape()[0], qt.shape()[1]);
        if kt.shape()[..2] != [b, tl] || vt.shape()[..2] != [b, tl] {
            bail!("LinearAttention: batch/sequence sizes of query, key, value differ");
        }
        if qt.shape()[2] % hq != 0 || kt.shape()[2] % hkv != 0 || vt.shape()[2] % hkv != 0 {
            bail!("LinearAttention: hidden sizes are not multiples of the head counts");
        }
        let dk = qt.shape()[2] / hq;
        let dv = vt.shape()[2] / hkv;
        if kt.shape()[2] / hkv != dk {
            bail!("LinearAttention: key head size differs from query head size");
        }
        let group = hq / hkv;
        let scale = if scale_attr == 0.0 {
            1.0 / (dk as f64).sqrt()
        } else {
            scale_attr
        };
        let sdims = [b, hkv, dk, dv];
        let n = numel(&sdims)?;
        let (mut state, st_dtype) = match opt_tensor_in(ins, 3)? {
            Some(p) => {
                if p.shape() != sdims {
                    bail!(
                        "LinearAttention: past_state must have shape {sdims:?}, got {:?}",
                        p.shape()
                    );
                }
                if !p.dtype().is_standard_float() {
                    bail!("LinearAttention: past_state must be float");
                }
                (to_f64s(p, "past_state")?, p.dtype())
            }
            None => (vec![0.0; n], qt.dtype()),
        };
        // decay: per key dimension (width hkv*dk) or per head (width hkv).
        let decay = match opt_tensor_in(ins, 4)? {
            Some(d) => {
                let w = d.shape().get(2).copied().unwrap_or(0);
                if d.rank() != 3 || d.shape()[..2] != [b, tl] || (w != hkv * dk && w != hkv) {
                    bail!("LinearAttention: decay has invalid shape {:?}", d.shape());
                }
                Some((to_f64s(d, "decay")?, w == hkv * dk, w))
            }
            None if gated => bail!("LinearAttention: update_rule '{rule}' needs decay"),
            None => None,
        };
        let beta = match opt_tensor_in(ins, 5)? {
            Some(d) => {
                let w = d.shape().get(2).copied().unwrap_or(0);
                if d.rank() != 3 || d.shape()[..2] != [b, tl] || (w != hkv && w != 1) {
                    bail!("LinearAttention: beta has invalid shape {:?}", d.shape());
                }
                Some((to_f64s(d, "beta")?, w))
            }
            None if delta => bail!("LinearAttention: update_rule '{rule}' needs beta"),
            None => None,
        };
        let mut out = vec![0.0; numel(&[b, tl, hq, dv])?];
        let mut kvec = vec![0.0; dv];
        for bi in 0..b {
            for t in 0..tl {
                for g in 0..hkv {
                    let s = &mut state[(bi * hkv + g) * dk * dv..(bi * hkv + g + 1) * dk * dv];
                    let krow = &kv[((bi * tl + t) * hkv + g) * dk..][..dk];
                    let vrow = &vv[((bi * tl + t) * hkv + g) * dv..][..dv];
                    if gated {
                        if let Some((dvals, per_key, w)) = &decay {
                            let base = (bi * tl + t) * w;
                            for i in 0..dk {
                                let gi = if *per_key {
                                    dvals[base + g * dk + i]
                                } else {
                                    dvals[base + g]
                                };
                                let e = gi.exp();
                                s[i * dv..(i + 1) * dv].iter_mut().for_each(|x| *x *= e);
                            }
                        }
                    }
                    if delta {
                        let bt = match &beta {
                            Some((bv, w)) => bv[(bi * tl + t) * w + if *w == 1 { 0 } else { g }],
                            None => 1.0,
                        };
                        // kvec = S^T k
                        for (j, kvj) in kvec.iter_mut().enumerate() {
                            *kvj = (0..dk).map(|i| s[i * dv + j] * krow[i]).sum();
                        }
                        for i in 0..dk {
                            for j in 0..dv {
                                s[i * dv + j] += bt * krow[i] * (vrow[j] - kvec[j]);
                            }
                        }
                    } else {
                        for i in 0..dk {
                            for j in 0..dv {
                                s[i * dv + j] += krow[i] * vrow[j];
                            }
                        }
                    }
                    for hh in g * group..(g + 1) * group {
                        let qrow = &qv[((bi * tl + t) * hq + hh) * dk..][..dk];
                        let o = &mut out[((bi * tl + t) * hq + hh) * dv..][..dv];
                        for (j, oj) in o.iter_mut().enumerate() {
                            *oj = scale * (0..dk).map(|i| qrow[i] * s[i * dv + j]).sum::<f64>();
                        }
                    }
                }
            }
        }
        Ok(vec![
            from_f64s(qt.dtype(), &[b, tl, hq * dv], out)?.into(),
            from_f64s(st_dtype, &sdims, state)?.into(),
        ])
    }))
}
