//! What the recurrent networks share: one engine for RNN, GRU and LSTM
//! cells (forward, reverse,
//! bidirectional; every activation of the spec; sequence_lens; initial
//! states; layout 0 and 1). Computes in f64, returns the input's type.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;
use half::{bf16, f16};

/// One activation function with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    Relu,
    Tanh,
    Sigmoid,
    Affine(f64, f64),
    LeakyRelu(f64),
    ThresholdedRelu(f64),
    ScaledTanh(f64, f64),
    HardSigmoid(f64, f64),
    Elu(f64),
    Softsign,
    Softplus,
}

impl Act {
    /// Parses an activation name (case-insensitive) with optional alpha/beta.
    pub fn parse(name: &str, alpha: Option<f64>, beta: Option<f64>) -> Result<Act, KernelError> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "relu" => Act::Relu,
            "tanh" => Act::Tanh,
            "sigmoid" => Act::Sigmoid,
            "affine" => Act::Affine(alpha.unwrap_or(1.0), beta.unwrap_or(0.0)),
            "leakyrelu" => Act::LeakyRelu(alpha.unwrap_or(0.01)),
            "thresholdedrelu" => Act::ThresholdedRelu(alpha.unwrap_or(1.0)),
            "scaledtanh" => Act::ScaledTanh(alpha.unwrap_or(1.0), beta.unwrap_or(1.0)),
            "hardsigmoid" => Act::HardSigmoid(alpha.unwrap_or(0.2), beta.unwrap_or(0.5)),
            "elu" => Act::Elu(alpha.unwrap_or(1.0)),
            "softsign" => Act::Softsign,
            "softplus" => Act::Softplus,
            other => bail!("unknown activation '{other}'"),
        })
    }

    pub fn apply(self, x: f64) -> f64 {
        match self {
            Act::Relu => x.max(0.0),
            Act::Tanh => x.tanh(),
            Act::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Act::Affine(a, b) => a * x + b,
            Act::LeakyRelu(a) => {
                if x >= 0.0 {
                    x
                } else {
                    a * x
                }
            }
            Act::ThresholdedRelu(a) => {
                if x > a {
                    x
                } else {
                    0.0
                }
            }
            Act::ScaledTanh(a, b) => a * (b * x).tanh(),
            Act::HardSigmoid(a, b) => (a * x + b).clamp(0.0, 1.0),
            Act::Elu(a) => {
                if x >= 0.0 {
                    x
                } else {
                    a * (x.exp() - 1.0)
                }
            }
            Act::Softsign => x / (1.0 + x.abs()),
            Act::Softplus => {
                if x > 30.0 {
                    x
                } else {
                    x.exp().ln_1p()
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    /// Number of gates.
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }

    fn default_acts(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru => &["Sigmoid", "Tanh"],
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// The decoded attributes of a recurrent node.
struct Spec {
    cell: Cell,
    dirs: Vec<bool>, // true = reverse
    hidden: Option<usize>,
    acts: Vec<Vec<Act>>, // per direction
    clip: Option<f64>,
    layout: i64,
    linear_before_reset: bool,
    input_forget: bool,
}

fn spec(info: &NodeInfo, cell: Cell) -> Result<Spec, KernelError> {
    let direction = info.attrs.string_or("direction", "forward");
    let dirs = match direction.as_str() {
        "forward" => vec![false],
        "reverse" => vec![true],
        "bidirectional" => vec![false, true],
        other => bail!("unknown direction '{other}'"),
    };
    let hidden = match info.attrs.int("hidden_size") {
        Some(h) if h <= 0 => bail!("hidden_size {h} must be positive"),
        Some(h) => Some(h as usize),
        None => None,
    };
    let per = cell.default_acts().len();
    let names: Vec<String> = match info.attrs.strings("activations") {
        Some(v) if !v.is_empty() => v,
        _ => {
            let d: Vec<String> = cell.default_acts().iter().map(|s| s.to_string()).collect();
            dirs.iter().flat_map(|_| d.clone()).collect()
        }
    };
    let names = if names.len() == per && dirs.len() == 2 {
        // one list given for both directions
        names.iter().chain(names.iter()).cloned().collect()
    } else {
        names
    };
    if names.len() != per * dirs.len() {
        bail!(
            "{} activations given, {cell:?} with {} direction(s) needs {}",
            names.len(),
            dirs.len(),
            per * dirs.len()
        );
    }
    let alphas = info.attrs.floats("activation_alpha").unwrap_or_default();
    let betas = info.attrs.floats("activation_beta").unwrap_or_default();
    let mut acts = vec![];
    for d in 0..dirs.len() {
        let mut v = vec![];
        for k in 0..per {
            let i = d * per + k;
            v.push(Act::parse(
                &names[i],
                alphas.get(i).map(|&a| a as f64),
                betas.get(i).map(|&b| b as f64),
            )?);
        }
        acts.push(v);
    }
    let clip = info.attrs.float("clip").map(|c| c as f64);
    let layout = info.attrs.int_or("layout", 0);
    if info.opset >= 14 && layout != 0 && layout != 1 {
        bail!("layout {layout} must be 0 or 1");
    }
    Ok(Spec {
        cell,
        dirs,
        hidden,
        acts,
        clip,
        layout,
        linear_before_reset: info.attrs.int_or("linear_before_reset", 0) != 0,
        input_forget: info.attrs.int_or("input_forget", 0) != 0,
    })
}

fn floats(t: &Tensor, what: &str) -> Result<Vec<f64>, KernelError> {
    match t.dtype() {
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16 => {}
        other => bail!("{what} must be a float tensor, got {other}"),
    }
    t.to_f64_vec()
        .ok_or_else(|| KernelError::new(format!("{what} is not numeric")))
}

fn out_tensor(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    Ok(match dt {
        DataType::Float => Tensor::from_vec(shape, v.into_iter().map(|x| x as f32).collect())?,
        DataType::Double => Tensor::from_vec(shape, v)?,
        DataType::Float16 => Tensor::from_vec(shape, v.into_iter().map(f16::from_f64).collect())?,
        DataType::Bfloat16 => Tensor::from_vec(shape, v.into_iter().map(bf16::from_f64).collect())?,
        other => bail!("unsupported element type {other}"),
    })
}

fn expect_shape(t: &Tensor, want: &[usize], what: &str) -> Result<(), KernelError> {
    if t.shape() != want {
        bail!("{what} has shape {:?}, expected {want:?}", t.shape());
    }
    Ok(())
}

/// Runs a recurrent node. Returns Y, Y_h and (LSTM) Y_c.
fn run(s: &Spec, ins: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = tensor_in(ins, 0)?;
    let w = tensor_in(ins, 1)?;
    let r = tensor_in(ins, 2)?;
    let dt = x.dtype();
    if x.rank() != 3 {
        bail!("X must have rank 3, got shape {:?}", x.shape());
    }
    let (seq, batch, isz) = if s.layout == 0 {
        (x.shape()[0], x.shape()[1], x.shape()[2])
    } else {
        (x.shape()[1], x.shape()[0], x.shape()[2])
    };
    let nd = s.dirs.len();
    let g = s.cell.gates();
    if w.rank() != 3 || w.shape()[0] != nd || w.shape()[2] != isz || w.shape()[1] % g != 0 {
        bail!(
            "W has shape {:?}, expected [{nd}, {g}*hidden, {isz}]",
            w.shape()
        );
    }
    let h = w.shape()[1] / g;
    if let Some(hs) = s.hidden {
        if hs != h {
            bail!("hidden_size is {hs}, W implies {h}");
        }
    }
    expect_shape(r, &[nd, g * h, h], "R")?;
    let xv = floats(x, "X")?;
    let wv = floats(w, "W")?;
    let rv = floats(r, "R")?;
    let bv = match opt_tensor_in(ins, 3)? {
        Some(b) => {
            expect_shape(b, &[nd, 2 * g * h], "B")?;
            floats(b, "B")?
        }
        None => vec![0.0; nd * 2 * g * h],
    };
    let lens: Vec<usize> = match opt_tensor_in(ins, 4)? {
        Some(t) => {
            let v = t.to_i64_vec()?;
            if v.len() != batch {
                bail!("sequence_lens has {} entries, batch is {batch}", v.len());
            }
            v.iter()
                .map(|&l| {
                    if l < 0 || l as usize > seq {
                        Err(KernelError::new(format!(
                            "sequence length {l} is outside 0..={seq}"
                        )))
                    } else {
                        Ok(l as usize)
                    }
                })
                .collect::<Result<_, _>>()?
        }
        None => vec![seq; batch],
    };
    let state_shape = if s.layout == 0 {
        [nd, batch, h]
    } else {
        [batch, nd, h]
    };
    // index of (d, b, k) in a state tensor of the chosen layout
    let sidx = |d: usize, b: usize, k: usize| {
        if s.layout == 0 {
            (d * batch + b) * h + k
        } else {
            (b * nd + d) * h + k
        }
    };
    let init = |i: usize, what: &str| -> Result<Option<Vec<f64>>, KernelError> {
        match opt_tensor_in(ins, i)? {
            Some(t) => {
                expect_shape(t, &state_shape, what)?;
                Ok(Some(floats(t, what)?))
            }
            None => Ok(None),
        }
    };
    let h0 = init(5, "initial_h")?;
    let c0 = if s.cell == Cell::Lstm {
        init(6, "initial_c")?
    } else {
        None
    };
    let p = if s.cell == Cell::Lstm {
        match opt_tensor_in(ins, 7)? {
            Some(t) => {
                expect_shape(t, &[nd, 3 * h], "P")?;
                Some(floats(t, "P")?)
            }
            None => None,
        }
    } else {
        None
    };
    let xat = |t: usize, b: usize, k: usize| {
        if s.layout == 0 {
            xv[(t * batch + b) * isz + k]
        } else {
            xv[(b * seq + t) * isz + k]
        }
    };
    // Y index of (t, d, b, k)
    let yidx = |t: usize, d: usize, b: usize, k: usize| {
        if s.layout == 0 {
            ((t * nd + d) * batch + b) * h + k
        } else {
            ((b * seq + t) * nd + d) * h + k
        }
    };
    let total = seq
        .checked_mul(nd)
        .and_then(|v| v.checked_mul(batch))
        .and_then(|v| v.checked_mul(h))
        .ok_or_else(|| KernelError::new("output too large"))?;
    let mut y = vec![0.0; total];
    let mut yh = vec![0.0; nd * batch * h];
    let mut yc = vec![0.0; nd * batch * h];
    let clip = |v: f64| match s.clip {
        Some(c) => v.clamp(-c, c),
        None => v,
    };
    let mut gates = vec![0.0; g * h];
    let mut rh = vec![0.0; g * h];
    for (d, &rev) in s.dirs.iter().enumerate() {
        let acts = &s.acts[d];
        let wd = &wv[d * g * h * isz..(d + 1) * g * h * isz];
        let rd = &rv[d * g * h * h..(d + 1) * g * h * h];
        let wb = &bv[d * 2 * g * h..d * 2 * g * h + g * h];
        let rb = &bv[d * 2 * g * h + g * h..(d + 1) * 2 * g * h];
        for b in 0..batch {
            let mut hs: Vec<f64> = (0..h)
                .map(|k| h0.as_ref().map_or(0.0, |v| v[sidx(d, b, k)]))
                .collect();
            let mut cs: Vec<f64> = (0..h)
                .map(|k| c0.as_ref().map_or(0.0, |v| v[sidx(d, b, k)]))
                .collect();
            let len = lens[b];
            for step in 0..len {
                let t = if rev { len - 1 - step } else { step };
                // gates = W x + Wb ; rh = R h + Rb
                for j in 0..g * h {
                    let mut a = wb[j];
                    let row = &wd[j * isz..(j + 1) * isz];
                    for (k, wk) in row.iter().enumerate() {
                        a += wk * xat(t, b, k);
                    }
                    gates[j] = a;
                    let mut c = rb[j];
                    let row = &rd[j * h..(j + 1) * h];
                    for (k, rk) in row.iter().enumerate() {
                        c += rk * hs[k];
                    }
                    rh[j] = c;
                }
                match s.cell {
                    Cell::Rnn => {
                        for k in 0..h {
                            hs[k] = acts[0].apply(clip(gates[k] + rh[k]));
                        }
                    }
                    Cell::Gru => {
                        // gate order z, r, h
                        let mut newh = vec![0.0; h];
                        let rvec: Vec<f64> = (0..h)
                            .map(|k| acts[0].apply(clip(gates[h + k] + rh[h + k])))
                            .collect();
                        for k in 0..h {
                            let z = acts[0].apply(clip(gates[k] + rh[k]));
                            let rr = rvec[k];
                            let cand = if s.linear_before_reset {
                                gates[2 * h + k] + rr * rh[2 * h + k]
                            } else {
                                // (r ⊙ h) Rh^T + Rbh
                                let row = &rd[(2 * h + k) * h..(2 * h + k + 1) * h];
                                let mut acc = rb[2 * h + k];
                                for (q, rq) in row.iter().enumerate() {
                                    acc += rq * rvec[q] * hs[q];
                                }
                                gates[2 * h + k] + acc
                            };
                            let ht = acts[1].apply(clip(cand));
                            newh[k] = (1.0 - z) * ht + z * hs[k];
                        }
                        hs = newh;
                    }
                    Cell::Lstm => {
                        // gate order i, o, f, c; peepholes i, o, f
                        let pd = p.as_ref().map(|v| &v[d * 3 * h..(d + 1) * 3 * h]);
                        for k in 0..h {
                            let pi = pd.map_or(0.0, |v| v[k]);
                            let po = pd.map_or(0.0, |v| v[h + k]);
                            let pf = pd.map_or(0.0, |v| v[2 * h + k]);
                            let i = acts[0].apply(clip(gates[k] + rh[k] + pi * cs[k]));
                            let f = if s.input_forget {
                                1.0 - i
                            } else {
                                acts[0].apply(clip(gates[2 * h + k] + rh[2 * h + k] + pf * cs[k]))
                            };
                            let c = acts[1].apply(clip(gates[3 * h + k] + rh[3 * h + k]));
                            let ct = f * cs[k] + i * c;
                            let o = acts[0].apply(clip(gates[h + k] + rh[h + k] + po * ct));
                            cs[k] = ct;
                            hs[k] = o * acts[2].apply(ct);
                        }
                    }
                }
                for k in 0..h {
                    y[yidx(t, d, b, k)] = hs[k];
                }
            }
            for k in 0..h {
                yh[sidx(d, b, k)] = hs[k];
                yc[sidx(d, b, k)] = cs[k];
            }
        }
    }
    let yshape = if s.layout == 0 {
        vec![seq, nd, batch, h]
    } else {
        vec![batch, seq, nd, h]
    };
    let mut out = vec![
        Value::Tensor(out_tensor(dt, &yshape, y)?),
        Value::Tensor(out_tensor(dt, &state_shape, yh)?),
    ];
    if s.cell == Cell::Lstm {
        out.push(Value::Tensor(out_tensor(dt, &state_shape, yc)?));
    }
    Ok(out)
}

pub(super) fn build(info: &NodeInfo, cell: Cell) -> Result<Kernel, KernelError> {
    let s = spec(info, cell)?;
    Ok(Box::new(move |_, ins| run(&s, ins)))
}

/// The outputs of a recurrent operator with `gates` gate blocks in W and
/// R: Y of [seq, directions, batch, hidden] (layout 1: batch first), then
/// `n_out - 1` states of [directions, batch, hidden].
pub(super) fn recurrent_shape(
    cx: &mut InferCtx,
    gates: i64,
    n_out: usize,
) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let nd: i64 = match cx.attrs.string_or("direction", "forward").as_str() {
        "bidirectional" => 2,
        "forward" | "reverse" => 1,
        other => return Err(ShapeError::new(format!("unknown direction '{other}'"))),
    };
    let layout = cx.attrs.int_or("layout", 0);
    let hidden: Dim = match cx.attrs.int("hidden_size") {
        Some(h) => Some(Expr::int(h)),
        None => cx
            .shape(2)
            .and_then(|s| s.get(2).cloned().flatten())
            .or_else(|| {
                cx.shape(1)
                    .and_then(|s| s.get(1).cloned().flatten())
                    .map(|e| e.floor_div(&Expr::int(gates)))
            }),
    };
    let x = cx.shape(0).map(|s| s.to_vec());
    if let Some(x) = &x {
        if x.len() != 3 {
            return Err(ShapeError::new(format!(
                "X must have rank 3, got {}",
                x.len()
            )));
        }
    }
    let (seq, batch): (Dim, Dim) = match &x {
        Some(x) if layout == 0 => (x[0].clone(), x[1].clone()),
        Some(x) => (x[1].clone(), x[0].clone()),
        None => (None, None),
    };
    let nd = Some(Expr::int(nd));
    let (y, st) = if layout == 0 {
        (
            vec![seq, nd.clone(), batch.clone(), hidden.clone()],
            vec![nd, batch, hidden],
        )
    } else {
        (
            vec![batch.clone(), seq, nd.clone(), hidden.clone()],
            vec![batch, nd, hidden],
        )
    };
    cx.set_tensor(0, elem, Some(y));
    for i in 1..n_out {
        cx.set_tensor(i, elem, Some(st.clone()));
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activations() {
        assert_eq!(Act::parse("relu", None, None).unwrap().apply(-2.0), 0.0);
        assert!((Act::parse("Sigmoid", None, None).unwrap().apply(0.0) - 0.5).abs() < 1e-12);
        assert_eq!(
            Act::parse("HardSigmoid", None, None).unwrap().apply(10.0),
            1.0
        );
        assert_eq!(
            Act::parse("LeakyRelu", Some(0.5), None)
                .unwrap()
                .apply(-2.0),
            -1.0
        );
        assert_eq!(
            Act::parse("Affine", Some(2.0), Some(1.0))
                .unwrap()
                .apply(3.0),
            7.0
        );
        assert!(Act::parse("Foo", None, None).is_err());
    }
}
