//! `Attention`: scaled dot-product attention with grouped heads, masks,
//! the KV cache, softcap and the optional outputs.

use super::attention_values::{
    add, attr_dim, check_float, dim, div, float_vals, mul, numel, softmax_row, Heads, Narrow,
};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::{Tensor, Value};

/// Attention: Y, present_key, present_value, qk_matmul_output.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let qe = check_float(cx, 0, "Attention")?;
    let ke = check_float(cx, 1, "Attention")?;
    let ve = check_float(cx, 2, "Attention")?;
    let rank = match cx.rank(0) {
        Some(r) => r,
        None => {
            cx.set_tensor(0, qe, None);
            return Ok(());
        }
    };
    if rank != 3 && rank != 4 {
        shape_bail!("Attention: Q must be 3-D or 4-D, got rank {rank}");
    }
    for i in 1..3 {
        if let Some(r) = cx.rank(i) {
            if r != rank {
                shape_bail!("Attention: Q, K and V must have the same rank");
            }
        }
    }
    let b = dim(cx, 0, 0);
    // (heads, seq, head size) of Q, K, V.
    let (hq, sq, hkv, skv, dk, dv) = if rank == 4 {
        (
            dim(cx, 0, 1),
            dim(cx, 0, 2),
            dim(cx, 1, 1),
            dim(cx, 1, 2),
            dim(cx, 1, 3),
            dim(cx, 2, 3),
        )
    } else {
        let hq = attr_dim(cx, "q_num_heads");
        let hkv = attr_dim(cx, "kv_num_heads");
        (
            hq,
            dim(cx, 0, 1),
            hkv.clone(),
            dim(cx, 1, 1),
            div(&dim(cx, 1, 2), &hkv),
            div(&dim(cx, 2, 2), &hkv),
        )
    };
    let y = if rank == 4 {
        vec![b.clone(), hq.clone(), sq.clone(), dv.clone()]
    } else {
        vec![b.clone(), sq.clone(), mul(&hq, &dv)]
    };
    cx.set_tensor(0, qe, Some(y));
    let past = if cx.has_input(4) {
        dim(cx, 4, 2)
    } else {
        Some(Expr::int(0))
    };
    let total = add(&past, &skv);
    if cx.num_outputs() > 1 {
        let pk = vec![b.clone(), hkv.clone(), total.clone(), dk];
        cx.set_tensor(1, ke, Some(pk));
    }
    if cx.num_outputs() > 2 {
        let pv = vec![b.clone(), hkv, total.clone(), dv];
        cx.set_tensor(2, ve, Some(pv));
    }
    if cx.num_outputs() > 3 {
        cx.set_tensor(3, qe, Some(vec![b, hq, sq, total]));
    }
    Ok(())
}

/// The attention mask broadcast to (B, Hq, Sq, T): `None` where the key is
/// disallowed, else the additive bias.
struct Mask {
    dims: [usize; 4],
    bias: Vec<Option<f64>>,
}

impl Mask {
    fn new(t: &Tensor, b: usize, h: usize, sq: usize, total: usize) -> Result<Mask, KernelError> {
        let sh = t.shape();
        if sh.is_empty() || sh.len() > 4 {
            bail!("Attention: attn_mask must have rank 1 to 4, got {:?}", sh);
        }
        let mut dims = [1usize; 4];
        dims[4 - sh.len()..].copy_from_slice(sh);
        for (k, want) in [b, h, sq].into_iter().enumerate() {
            if dims[k] != 1 && dims[k] != want {
                bail!(
                    "Attention: attn_mask shape {sh:?} does not broadcast to ({b}, {h}, {sq}, {total})"
                );
            }
        }
        if dims[3] > total {
            bail!(
                "Attention: attn_mask last dimension {} exceeds the total sequence length {total}",
                dims[3]
            );
        }
        let bias = match t {
            Tensor::Bool(a) => a
                .iter()
                .map(|&x| if x { Some(0.0) } else { None })
                .collect(),
            _ => to_f64s(t, "attn_mask")?.into_iter().map(Some).collect(),
        };
        Ok(Mask { dims, bias })
    }

    fn get(&self, b: usize, h: usize, i: usize, j: usize) -> Option<f64> {
        let d = &self.dims;
        if j >= d[3] {
            return None;
        }
        let bi = if d[0] == 1 { 0 } else { b };
        let hi = if d[1] == 1 { 0 } else { h };
        let ii = if d[2] == 1 { 0 } else { i };
        self.bias[((bi * d[1] + hi) * d[2] + ii) * d[3] + j]
    }
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let is_causal = info.attrs.int_or("is_causal", 0) != 0;
    let q_heads = info.attrs.int("q_num_heads");
    let kv_heads = info.attrs.int("kv_num_heads");
    let left = info.attrs.int_or("left_window_size", -1);
    let right = info.attrs.int_or("right_window_size", -1);
    let scale_attr = info.attrs.float("scale").map(|s| s as f64);
    let softcap = info.attrs.float_or("softcap", 0.0) as f64;
    let mode = info.attrs.int_or("qk_matmul_output_mode", 0);
    if !(0..=3).contains(&mode) {
        bail!("Attention: qk_matmul_output_mode must be 0..3, got {mode}");
    }
    // softmax_precision: float (1) or double (11) computes the softmax in
    // that wider type; unset, float16 (10) or bfloat16 (16) in T.
    let softmax_in_t = !matches!(info.attrs.int("softmax_precision"), Some(1) | Some(11));
    let nouts = info.node.output.len();
    let want = |i: usize| info.node.output.get(i).is_some_and(|n| !n.is_empty());
    let (want_present, want_qk) = (want(1) || want(2), want(3));
    let to_heads = |h: Option<i64>| h.and_then(|x| usize::try_from(x).ok());
    let (q_heads, kv_heads) = (to_heads(q_heads), to_heads(kv_heads));
    Ok(Box::new(move |_, ins| {
        let (qt, qv) = float_vals(ins, 0, "Attention")?;
        let (kt, kv) = float_vals(ins, 1, "Attention")?;
        let (vt, vv) = float_vals(ins, 2, "Attention")?;
        let packed = qt.rank() == 3;
        if qt.rank() != kt.rank() || kt.rank() != vt.rank() {
            bail!("Attention: Q, K and V must have the same rank");
        }
        let q = Heads::from_tensor(qv, qt.shape(), q_heads, "Q")?;
        let mut k = Heads::from_tensor(kv, kt.shape(), kv_heads, "K")?;
        let mut v = Heads::from_tensor(vv, vt.shape(), kv_heads, "V")?;
        if k.b != q.b || v.b != q.b || k.h != v.h || k.s != v.s || k.d != q.d {
            bail!(
                "Attention: inconsistent shapes Q {:?}, K {:?}, V {:?}",
                qt.shape(),
                kt.shape(),
                vt.shape()
            );
        }
        if k.h == 0 || q.h % k.h != 0 {
            bail!(
                "Attention: q_num_heads {} is not a multiple of kv_num_heads {}",
                q.h,
                k.h
            );
        }
        let group = q.h / k.h;
        let past_k = opt_tensor_in(ins, 4)?;
        let past_v = opt_tensor_in(ins, 5)?;
        let mut past_len = None;
        match (past_k, past_v) {
            (Some(pk), Some(pv)) => {
                if pk.rank() != 4 || pv.rank() != 4 {
                    bail!("Attention: past_key and past_value must be 4-D");
                }
                let pkh =
                    Heads::from_tensor(to_f64s(pk, "past_key")?, pk.shape(), None, "past_key")?;
                let pvh =
                    Heads::from_tensor(to_f64s(pv, "past_value")?, pv.shape(), None, "past_value")?;
                past_len = Some(pkh.s);
                k = pkh.concat_seq(&k, "past_key")?;
                v = pvh.concat_seq(&v, "past_value")?;
            }
            (None, None) => {}
            _ => bail!("Attention: past_key and past_value must be given together"),
        }
        if k.s != v.s {
            bail!(
                "Attention: key length {} differs from value length {}",
                k.s,
                v.s
            );
        }
        let total = k.s;
        let nonpad = match opt_tensor_in(ins, 6)? {
            Some(t) => {
                let n = t.to_i64_vec()?;
                if n.len() != q.b {
                    bail!(
                        "Attention: nonpad_kv_seqlen must have {} elements, got {}",
                        q.b,
                        n.len()
                    );
                }
                Some(n)
            }
            None => None,
        };
        let mask = match opt_tensor_in(ins, 3)? {
            Some(t) => Some(Mask::new(t, q.b, q.h, q.s, total)?),
            None => None,
        };
        let scale = scale_attr.unwrap_or(1.0 / (q.d as f64).sqrt());
        let narrow = Narrow::of(qt.dtype());
        // In T the function body scales Q and K each by sqrt(scale), rounded.
        // (The unscaled K is kept for present_key.)
        let (q, k_scaled) = match narrow {
            Some(n) => {
                let st = n.r64(scale.sqrt());
                let sc = |h: &Heads| Heads {
                    v: h.v.iter().map(|&x| n.r(x as f32 * st) as f64).collect(),
                    ..h.clone()
                };
                (sc(&q), Some(sc(&k)))
            }
            None => (q, None),
        };
        let kq = k_scaled.as_ref().unwrap_or(&k);
        let dv = v.d;
        let mut y = vec![0.0; numel(&[q.b, q.h, q.s, dv])?];
        let mut qk = if want_qk {
            vec![0.0; numel(&[q.b, q.h, q.s, total])?]
        } else {
            Vec::new()
        };
        let mut row = vec![0.0; total];
        for b in 0..q.b {
            let offset: i64 = match (past_len, &nonpad) {
                (Some(p), _) => p as i64,
                (None, Some(n)) => n[b].saturating_sub(q.s as i64),
                (None, None) => 0,
            };
            let valid = nonpad.as_ref().map(|n| n[b]);
            for h in 0..q.h {
                let kh = h / group;
                for i in 0..q.s {
                    let qrow = q.at(b, h, i);
                    let p = offset.saturating_add(i as i64);
                    let out_base = ((b * q.h + h) * q.s + i) * total;
                    for (j, r) in row.iter_mut().enumerate() {
                        let krow = kq.at(b, kh, j);
                        let mut s = match narrow {
                            Some(n) => {
                                let dot = qrow
                                    .iter()
                                    .zip(krow)
                                    .fold(0.0f32, |acc, (&a, &c)| acc + a as f32 * c as f32);
                                n.r(dot) as f64
                            }
                            None => qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>() * scale,
                        };
                        if mode == 0 && want_qk {
                            qk[out_base + j] = s;
                        }
                        if softcap > 0.0 {
                            s = match narrow {
                                Some(n) => {
                                    let c = softcap as f32;
                                    n.r(n.r(n.r(s as f32 / c).tanh()) * c) as f64
                                }
                                None => softcap * (s / softcap).tanh(),
                            };
                        }
                        if mode == 1 && want_qk {
                            qk[out_base + j] = s;
                        }
                        let jj = j as i64;
                        let mut allowed = true;
                        if is_causal && jj > p {
                            allowed = false;
                        }
                        if left >= 0 && jj < p.saturating_sub(left) {
                            allowed = false;
                        }
                        if right >= 0 && jj > p.saturating_add(right) {
                            allowed = false;
                        }
                        if valid.is_some_and(|n| jj >= n) {
                            allowed = false;
                        }
                        if let Some(m) = &mask {
                            match m.get(b, h, i, j) {
                                Some(bias) => {
                                    s = match narrow {
                                        Some(n) => n.r((s + bias) as f32) as f64,
                                        None => s + bias,
                                    }
                                }
                                None => allowed = false,
                            }
                        }
                        *r = if allowed { s } else { f64::NEG_INFINITY };
                        if mode == 2 && want_qk {
                            qk[out_base + j] = *r;
                        }
                    }
                    match narrow {
                        Some(n) if softmax_in_t => n.softmax_row(&mut row),
                        _ => softmax_row(&mut row),
                    }
                    if let Some(n) = narrow.filter(|_| !softmax_in_t) {
                        // Softmax in a wider type, cast back to T before P·V.
                        row.iter_mut().for_each(|x| *x = n.r64(*x) as f64);
                    }
                    if mode == 3 && want_qk {
                        qk[out_base..out_base + total].copy_from_slice(&row);
                    }
                    let yo = ((b * q.h + h) * q.s + i) * dv;
                    match narrow {
                        Some(n) => {
                            for (c, yv) in y[yo..yo + dv].iter_mut().enumerate() {
                                let mut acc = 0.0f32;
                                for (j, &pj) in row.iter().enumerate() {
                                    let vj = v.at(b, kh, j).get(c).copied().unwrap_or(0.0);
                                    acc += pj as f32 * vj as f32;
                                }
                                *yv = n.r(acc) as f64;
                            }
                        }
                        None => {
                            for (j, &pj) in row.iter().enumerate() {
                                if pj == 0.0 {
                                    continue;
                                }
                                for (yv, vv) in y[yo..yo + dv].iter_mut().zip(v.at(b, kh, j)) {
                                    *yv += pj * vv;
                                }
                            }
                        }
                    }
                }
            }
        }
        let yh = Heads {
            b: q.b,
            h: q.h,
            s: q.s,
            d: dv,
            v: y,
        };
        let yt = if packed {
            from_f64s(qt.dtype(), &[q.b, q.s, q.h * dv], yh.to_packed())?
        } else {
            from_f64s(qt.dtype(), &yh.shape(), yh.v)?
        };
        let mut outs: Vec<Value> = vec![yt.into()];
        if nouts > 1 {
            if want_present {
                outs.push(from_f64s(kt.dtype(), &k.shape(), k.v.clone())?.into());
                outs.push(from_f64s(vt.dtype(), &v.shape(), v.v.clone())?.into());
            } else {
                outs.push(Tensor::zeros(kt.dtype(), &[0])?.into());
                outs.push(Tensor::zeros(vt.dtype(), &[0])?.into());
            }
        }
        if nouts > 3 {
            let qk_t = if want_qk {
                from_f64s(qt.dtype(), &[q.b, q.h, q.s, total], qk)?
            } else {
                Tensor::zeros(qt.dtype(), &[0])?
            };
            outs.push(qk_t.into());
        }
        outs.truncate(nouts.max(1));
        Ok(outs)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_pads_short_last_dim() {
        let t = Tensor::from_vec(&[2], vec![true, false]).unwrap();
        let m = Mask::new(&t, 1, 1, 1, 3).unwrap();
        assert_eq!(m.get(0, 0, 0, 0), Some(0.0));
        assert_eq!(m.get(0, 0, 0, 1), None);
        assert_eq!(m.get(0, 0, 0, 2), None);
        assert!(Mask::new(&t, 1, 1, 1, 1).is_err());
    }
}
