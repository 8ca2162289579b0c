//! Transformer kernels: Attention, RotaryEmbedding, RMSNormalization,
//! SwiGLU, LinearAttention, CausalConvWithState, TensorScatter and the
//! preview FlexAttention.
//!
//! Every float kernel computes in f64 and rounds once to the output type, so
//! float16 / bfloat16 results are as close as the element type allows;
//! except Attention on float16 / bfloat16, whose function body computes in
//! the input type (scale, Q·Kᵀ, bias, softmax and P·V each rounded to T,
//! with f32 arithmetic inside each step): see [`Narrow`].

use super::nn::{from_f64s, to_f64s};
use super::norm_axis;
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};
use ndarray::{ArrayD, IxDyn};

fn is_float(d: DataType) -> bool {
    matches!(
        d,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    )
}

/// Input `i` as a float tensor with its values as f64.
fn float_vals<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
    op: &str,
) -> Result<(&'v Tensor, Vec<f64>), KernelError> {
    let t = tensor_in(ins, i)?;
    if !is_float(t.dtype()) {
        bail!("{op}: input {i} must be a float tensor, got {}", t.dtype());
    }
    Ok((t, to_f64s(t, op)?))
}

/// The element count of an f64 buffer about to be allocated, checked
/// against the memory budget.
fn numel(dims: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(dims, 8)?)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Numerically stable softmax in place over a row; a row with no finite
/// maximum (every entry `-inf`, or NaN) becomes all zeros.
fn softmax_row(row: &mut [f64]) {
    let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        row.iter_mut().for_each(|x| *x = 0.0);
        return;
    }
    let mut sum = 0.0;
    for x in row.iter_mut() {
        *x = (*x - m).exp();
        sum += *x;
    }
    if sum > 0.0 {
        row.iter_mut().for_each(|x| *x /= sum);
    }
}

// ------------------------------------------------------- narrow float steps

/// Step-wise rounding for Attention on float16 / bfloat16, following the
/// operator's function body: each elementwise step is computed in f32 and
/// rounded to T; matrix products accumulate in f32 and round once; the
/// softmax denominator accumulates in f32 for float16 and in T for
/// bfloat16 (an add of two T values rounds to T).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Narrow {
    F16,
    Bf16,
}

impl Narrow {
    fn of(d: DataType) -> Option<Narrow> {
        match d {
            DataType::Float16 => Some(Narrow::F16),
            DataType::Bfloat16 => Some(Narrow::Bf16),
            _ => None,
        }
    }

    /// Round an f32 result to T.
    fn r(self, x: f32) -> f32 {
        match self {
            Narrow::F16 => half::f16::from_f32(x).to_f32(),
            Narrow::Bf16 => half::bf16::from_f32(x).to_f32(),
        }
    }

    /// Round an f64 constant straight to T.
    fn r64(self, x: f64) -> f32 {
        match self {
            Narrow::F16 => half::f16::from_f64(x).to_f32(),
            Narrow::Bf16 => half::bf16::from_f64(x).to_f32(),
        }
    }

    /// Softmax over a row of T values, each step rounded to T; a row with
    /// no finite maximum becomes all zeros.
    fn softmax_row(self, row: &mut [f64]) {
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            row.iter_mut().for_each(|x| *x = 0.0);
            return;
        }
        let m = m as f32;
        let mut acc = 0.0f32;
        for x in row.iter_mut() {
            let e = self.r(self.r(*x as f32 - m).exp());
            acc = match self {
                Narrow::F16 => acc + e,
                Narrow::Bf16 => self.r(acc + e),
            };
            *x = e as f64;
        }
        let mut sum = self.r(acc);
        if sum == 0.0 {
            sum = 1.0;
        }
        row.iter_mut()
            .for_each(|x| *x = self.r(*x as f32 / sum) as f64);
    }
}

// ------------------------------------------------------------------ layouts

/// A (B, H, S, D) tensor as flat f64 values.
#[derive(Clone, Debug)]
struct Heads {
    b: usize,
    h: usize,
    s: usize,
    d: usize,
    v: Vec<f64>,
}

impl Heads {
    fn at(&self, b: usize, h: usize, s: usize) -> &[f64] {
        let o = ((b * self.h + h) * self.s + s) * self.d;
        &self.v[o..o + self.d]
    }

    /// From a 4-D tensor, or a 3-D (B, S, H*D) tensor with `heads` heads.
    fn from_tensor(
        v: Vec<f64>,
        shape: &[usize],
        heads: Option<usize>,
        what: &str,
    ) -> Result<Heads, KernelError> {
        match shape.len() {
            4 => Ok(Heads {
                b: shape[0],
                h: shape[1],
                s: shape[2],
                d: shape[3],
                v,
            }),
            3 => {
                let h = match heads {
                    Some(h) if h > 0 => h,
                    _ => bail!("{what} is 3-D: the number of heads must be a positive attribute"),
                };
                let (b, s, hid) = (shape[0], shape[1], shape[2]);
                if hid % h != 0 {
                    bail!("{what}: hidden size {hid} is not a multiple of {h} heads");
                }
                let d = hid / h;
                let mut out = vec![0.0; v.len()];
                for bi in 0..b {
                    for si in 0..s {
                        for hi in 0..h {
                            let src = ((bi * s + si) * h + hi) * d;
                            let dst = ((bi * h + hi) * s + si) * d;
                            out[dst..dst + d].copy_from_slice(&v[src..src + d]);
                        }
                    }
                }
                Ok(Heads { b, h, s, d, v: out })
            }
            r => bail!("{what} must be 3-D or 4-D, got rank {r}"),
        }
    }

    /// Back to (B, S, H*D) order.
    fn to_packed(&self) -> Vec<f64> {
        let (b, h, s, d) = (self.b, self.h, self.s, self.d);
        let mut out = vec![0.0; self.v.len()];
        for bi in 0..b {
            for hi in 0..h {
                for si in 0..s {
                    let src = ((bi * h + hi) * s + si) * d;
                    let dst = ((bi * s + si) * h + hi) * d;
                    out[dst..dst + d].copy_from_slice(&self.v[src..src + d]);
                }
            }
        }
        out
    }

    /// Concatenation along the sequence axis.
    fn concat_seq(&self, next: &Heads, what: &str) -> Result<Heads, KernelError> {
        if self.b != next.b || self.h != next.h || self.d != next.d {
            bail!(
                "{what}: past shape ({}, {}, {}, {}) does not match the new ({}, {}, {}, {})",
                self.b,
                self.h,
                self.s,
                self.d,
                next.b,
                next.h,
                next.s,
                next.d
            );
        }
        let s = self.s + next.s;
        let mut v = Vec::with_capacity(self.b * self.h * s * self.d);
        for bi in 0..self.b {
            for hi in 0..self.h {
                for si in 0..self.s {
                    v.extend_from_slice(self.at(bi, hi, si));
                }
                for si in 0..next.s {
                    v.extend_from_slice(next.at(bi, hi, si));
                }
            }
        }
        Ok(Heads {
            b: self.b,
            h: self.h,
            s,
            d: self.d,
            v,
        })
    }

    fn shape(&self) -> Vec<usize> {
        vec![self.b, self.h, self.s, self.d]
    }
}

// ---------------------------------------------------------------- Attention

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

pub fn attention(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

// ------------------------------------------------------------ FlexAttention

pub fn flex_attention(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let scale_attr = info.attrs.float("scale").map(|s| s as f64);
    let prec = info.attrs.int("softmax_precision");
    let score_mod = if info.attrs.graph("score_mod").is_some() {
        Some(info.subgraph("score_mod")?)
    } else {
        None
    };
    let prob_mod = if info.attrs.graph("prob_mod").is_some() {
        Some(info.subgraph("prob_mod")?)
    } else {
        None
    };
    Ok(Box::new(move |cx, ins| {
        let (qt, qv) = float_vals(ins, 0, "FlexAttention")?;
        let (kt, kv) = float_vals(ins, 1, "FlexAttention")?;
        let (vt, vv) = float_vals(ins, 2, "FlexAttention")?;
        for t in [qt, kt, vt] {
            if t.rank() != 4 {
                bail!("FlexAttention: Q, K and V must be 4-D, got {:?}", t.shape());
            }
        }
        let q = Heads::from_tensor(qv, qt.shape(), None, "Q")?;
        let k = Heads::from_tensor(kv, kt.shape(), None, "K")?;
        let v = Heads::from_tensor(vv, vt.shape(), None, "V")?;
        if k.b != q.b || v.b != q.b || k.h != v.h || k.s != v.s || k.d != q.d {
            bail!(
                "FlexAttention: inconsistent shapes Q {:?}, K {:?}, V {:?}",
                qt.shape(),
                kt.shape(),
                vt.shape()
            );
        }
        if k.h == 0 || q.h % k.h != 0 {
            bail!(
                "FlexAttention: {} query heads is not a multiple of {} kv heads",
                q.h,
                k.h
            );
        }
        let group = q.h / k.h;
        let sp = match prec {
            Some(1) => DataType::Float,
            Some(10) => DataType::Float16,
            Some(11) => DataType::Double,
            Some(16) => DataType::Bfloat16,
            Some(p) => bail!("FlexAttention: unsupported softmax_precision {p}"),
            None if qt.dtype() == DataType::Double => DataType::Double,
            None => DataType::Float,
        };
        let scale = scale_attr.unwrap_or(1.0 / (q.d as f64).sqrt());
        let sshape = [q.b, q.h, q.s, k.s];
        let mut scores = vec![0.0; numel(&sshape)?];
        for b in 0..q.b {
            for h in 0..q.h {
                for i in 0..q.s {
                    let qrow = q.at(b, h, i);
                    let base = ((b * q.h + h) * q.s + i) * k.s;
                    for j in 0..k.s {
                        let krow = k.at(b, h / group, j);
                        scores[base + j] =
                            qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>() * scale;
                    }
                }
            }
        }
        let mut apply = |plan: &std::sync::Arc<dyn crate::ops::kernel::Subgraph>,
                         vals: Vec<f64>,
                         what: &str|
         -> Result<Vec<f64>, KernelError> {
            let t = from_f64s(sp, &sshape, vals)?;
            let outs = cx.run_subgraph(plan, vec![t.into()])?;
            let o = match outs.first() {
                Some(Value::Tensor(t)) => t,
                _ => bail!("FlexAttention: {what} must return one tensor"),
            };
            if o.shape() != sshape {
                bail!("FlexAttention: {what} changed the shape to {:?}", o.shape());
            }
            to_f64s(o, what)
        };
        // Values pass through the softmax precision.
        let round = |v: Vec<f64>| -> Result<Vec<f64>, KernelError> {
            to_f64s(&from_f64s(sp, &sshape, v)?, "scores")
        };
        let mut scores = match &score_mod {
            Some(p) => apply(p, scores, "score_mod")?,
            None => round(scores)?,
        };
        if k.s > 0 {
            for row in scores.chunks_mut(k.s) {
                softmax_row(row);
            }
        }
        let probs = match &prob_mod {
            Some(p) => apply(p, scores, "prob_mod")?,
            None => scores,
        };
        let dv = v.d;
        let mut y = vec![0.0; numel(&[q.b, q.h, q.s, dv])?];
        for b in 0..q.b {
            for h in 0..q.h {
                for i in 0..q.s {
                    let base = ((b * q.h + h) * q.s + i) * k.s;
                    let yo = ((b * q.h + h) * q.s + i) * dv;
                    for j in 0..k.s {
                        let pj = probs[base + j];
                        for (yv, vv) in y[yo..yo + dv].iter_mut().zip(v.at(b, h / group, j)) {
                            *yv += pj * vv;
                        }
                    }
                }
            }
        }
        Ok(vec![from_f64s(qt.dtype(), &[q.b, q.h, q.s, dv], y)?.into()])
    }))
}

// ---------------------------------------------------------- RotaryEmbedding

pub fn rotary_embedding(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

// --------------------------------------------------------- RMSNormalization

/// `t` broadcast (numpy rules, unidirectionally) to `shape`, as f64 values.
fn broadcast_vals(t: &Tensor, shape: &[usize], what: &str) -> Result<Vec<f64>, KernelError> {
    let v = to_f64s(t, what)?;
    let a = ArrayD::from_shape_vec(IxDyn(t.shape()), v)?;
    let b = a.broadcast(IxDyn(shape)).ok_or_else(|| {
        KernelError::new(format!(
            "{what} of shape {:?} does not broadcast to {shape:?}",
            t.shape()
        ))
    })?;
    Ok(b.iter().cloned().collect())
}

pub fn rms_normalization(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let axis = info.attrs.int_or("axis", -1);
    Ok(Box::new(move |_, ins| {
        let (xt, mut v) = float_vals(ins, 0, "RMSNormalization")?;
        let st = tensor_in(ins, 1)?;
        if !is_float(st.dtype()) {
            bail!(
                "RMSNormalization: scale must be a float tensor, got {}",
                st.dtype()
            );
        }
        let sh = xt.shape().to_vec();
        let a = norm_axis(axis, sh.len())?;
        let block: usize = sh[a..].iter().product();
        let scale = broadcast_vals(st, &sh, "scale")?;
        if block > 0 {
            for chunk in v.chunks_mut(block) {
                let ms = chunk.iter().map(|x| x * x).sum::<f64>() / block as f64;
                let inv = 1.0 / (ms + eps).sqrt();
                chunk.iter_mut().for_each(|x| *x *= inv);
            }
        }
        for (y, s) in v.iter_mut().zip(&scale) {
            *y *= s;
        }
        Ok(vec![from_f64s(st.dtype(), &sh, v)?.into()])
    }))
}

// ------------------------------------------------------------------- SwiGLU

pub fn swiglu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 1.0) as f64;
    Ok(Box::new(move |_, ins| {
        let (at, av) = float_vals(ins, 0, "SwiGLU")?;
        let (bt, bv) = float_vals(ins, 1, "SwiGLU")?;
        if at.shape() != bt.shape() || at.dtype() != bt.dtype() {
            bail!(
                "SwiGLU: A ({} {:?}) and B ({} {:?}) must have the same type and shape",
                at.dtype(),
                at.shape(),
                bt.dtype(),
                bt.shape()
            );
        }
        let y = av
            .iter()
            .zip(&bv)
            .map(|(&a, &b)| a * sigmoid(alpha * a) * b)
            .collect();
        Ok(vec![from_f64s(at.dtype(), at.shape(), y)?.into()])
    }))
}

// ---------------------------------------------------------- LinearAttention

pub fn linear_attention(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
                if !is_float(p.dtype()) {
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

// ------------------------------------------------------ CausalConvWithState

pub fn causal_conv_with_state(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

// ------------------------------------------------------------ TensorScatter

/// Writes `upd` into a copy of `past`: `dest[i]` takes `upd[src]` for every
/// pair in `moves`.
fn scatter_copy<T: Clone>(
    past: &ArrayD<T>,
    upd: &ArrayD<T>,
    moves: &[(usize, usize)],
) -> Result<ArrayD<T>, KernelError> {
    let mut out: Vec<T> = past.iter().cloned().collect();
    let u: Vec<T> = upd.iter().cloned().collect();
    for &(d, s) in moves {
        match (out.get_mut(d), u.get(s)) {
            (Some(o), Some(x)) => *o = x.clone(),
            _ => bail!("TensorScatter: index out of range"),
        }
    }
    Ok(ArrayD::from_shape_vec(IxDyn(past.shape()), out)?)
}

/// (destination, source) flat index pairs of a TensorScatter: the cache has
/// shape `ps`, the update has `sl` entries along axis `a`.
fn scatter_moves(
    ps: &[usize],
    sl: usize,
    a: usize,
    wi: &[i64],
    circular: bool,
) -> Result<Vec<(usize, usize)>, KernelError> {
    let m = ps[a];
    let b = ps[0];
    let inner: usize = ps[a + 1..].iter().product();
    let outer: usize = ps[..a].iter().product();
    let per_batch = outer.checked_div(b).unwrap_or(1).max(1);
    let mut moves = Vec::new();
    for o in 0..outer {
        let bi = o / per_batch;
        for s in 0..sl {
            let w0 = *wi
                .get(bi)
                .ok_or_else(|| KernelError::new("TensorScatter: missing write index"))?;
            let w = w0.saturating_add(s as i64);
            let w = if circular {
                if m == 0 {
                    bail!("TensorScatter: circular write into an empty cache");
                }
                w.rem_euclid(m as i64) as usize
            } else {
                match usize::try_from(w) {
                    Ok(x) if x < m => x,
                    _ => bail!("TensorScatter: write index {w} out of range [0, {m})"),
                }
            };
            for e in 0..inner {
                moves.push(((o * m + w) * inner + e, (o * sl + s) * inner + e));
            }
        }
    }
    Ok(moves)
}

pub fn tensor_scatter(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -2);
    let mode = info.attrs.string_or("mode", "linear");
    let circular = match mode.as_str() {
        "linear" => false,
        "circular" => true,
        m => bail!("TensorScatter: unknown mode '{m}'"),
    };
    Ok(Box::new(move |_, ins| {
        let past = tensor_in(ins, 0)?;
        let upd = tensor_in(ins, 1)?;
        if past.dtype() != upd.dtype() {
            bail!(
                "TensorScatter: past_cache is {} but update is {}",
                past.dtype(),
                upd.dtype()
            );
        }
        let ps = past.shape();
        let us = upd.shape();
        let r = ps.len();
        if r < 2 || us.len() != r {
            bail!(
                "TensorScatter: past_cache {ps:?} and update {us:?} must have the same rank >= 2"
            );
        }
        let a = norm_axis(axis, r)?;
        if a == 0 {
            bail!("TensorScatter: axis cannot be the batch axis");
        }
        for i in 0..r {
            if i != a && ps[i] != us[i] {
                bail!(
                    "TensorScatter: update {us:?} differs from past_cache {ps:?} outside the axis"
                );
            }
        }
        let (m, sl) = (ps[a], us[a]);
        if sl > m {
            bail!("TensorScatter: update sequence length {sl} exceeds the cache length {m}");
        }
        let b = ps[0];
        let wi = match opt_tensor_in(ins, 2)? {
            Some(t) => {
                let v = t.to_i64_vec()?;
                if v.len() != b {
                    bail!(
                        "TensorScatter: write_indices must have {b} elements, got {}",
                        v.len()
                    );
                }
                v
            }
            None => vec![0; b],
        };
        let moves = scatter_moves(ps, sl, a, &wi, circular)?;
        macro_rules! pair {
            ($($v:ident),*) => {
                match (past, upd) {
                    $((Tensor::$v(p), Tensor::$v(u)) => Tensor::$v(scatter_copy(p, u, &moves)?),)*
                    (Tensor::Small { dtype, data: p }, Tensor::Small { data: u, .. }) => Tensor::Small {
                        dtype: *dtype,
                        data: scatter_copy(p, u, &moves)?,
                    },
                    _ => bail!("TensorScatter: mismatched types"),
                }
            };
        }
        let out = pair!(F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str);
        Ok(vec![out.into()])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_row_fully_masked_is_zero() {
        let mut r = vec![f64::NEG_INFINITY; 3];
        softmax_row(&mut r);
        assert_eq!(r, vec![0.0; 3]);
        let mut r = vec![0.0, f64::NEG_INFINITY, 0.0];
        softmax_row(&mut r);
        assert_eq!(r, vec![0.5, 0.0, 0.5]);
    }

    #[test]
    fn heads_pack_roundtrip() {
        let v: Vec<f64> = (0..24).map(|x| x as f64).collect();
        let h = Heads::from_tensor(v.clone(), &[2, 3, 4], Some(2), "x").unwrap();
        assert_eq!((h.b, h.h, h.s, h.d), (2, 2, 3, 2));
        // (b=0, s=1, head 1) starts at packed offset 1*4 + 2 = 6.
        assert_eq!(h.at(0, 1, 1), &[6.0, 7.0]);
        assert_eq!(h.to_packed(), v);
    }

    #[test]
    fn scatter_moves_linear_and_circular() {
        // cache (2, 4, 1), update length 2 along axis 1
        let lin = scatter_moves(&[2, 4, 1], 2, 1, &[1, 2], false).unwrap();
        assert_eq!(lin, vec![(1, 0), (2, 1), (6, 2), (7, 3)]);
        assert!(scatter_moves(&[2, 4, 1], 2, 1, &[1, 3], false).is_err());
        let circ = scatter_moves(&[2, 4, 1], 2, 1, &[1, 3], true).unwrap();
        assert_eq!(circ, vec![(1, 0), (2, 1), (7, 2), (4, 3)]);
    }

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
