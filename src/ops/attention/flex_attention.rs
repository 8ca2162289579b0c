//! `FlexAttention` (ai.onnx.preview): attention with score and mask
//! modification graphs.

use super::attention_values::{check_float, dim, float_vals, numel, softmax_row, Heads};
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::{DataType, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let qe = check_float(cx, 0, "FlexAttention")?;
    for i in 0..3 {
        if let Some(r) = cx.rank(i) {
            if r != 4 {
                shape_bail!("FlexAttention: input {i} must be 4-D, got rank {r}");
            }
        }
    }
    let y = vec![dim(cx, 0, 0), dim(cx, 0, 1), dim(cx, 0, 2), dim(cx, 2, 3)];
    cx.set_tensor(0, qe, Some(y));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
