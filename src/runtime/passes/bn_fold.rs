//! `fold-batchnorm`: a BatchNormalization in inference form (scale, bias,
//! mean and variance constant float32 initializers, one output) that is the
//! only reader of a Conv's output is folded into the Conv. With s = scale /
//! sqrt(var + epsilon) per output channel, the Conv's weights become W * s
//! and its bias (B - mean) * s + bias: two new tensors, made once here.
//! When W is not an initializer (computed by constant nodes), the Conv
//! applies v * s + t to its output tiles instead.

use super::Work;
use crate::ops::Attrs;
use crate::runtime::kernels::conv_epilogue::{Act, Epilogue};
use crate::tensor::{Tensor, Value};
use ndarray::{ArrayD, IxDyn};

fn f32_vec(w: &Work, name: &str) -> Option<Vec<f32>> {
    w.f32_constant(name).map(|a| a.iter().copied().collect())
}

/// The epsilon of BatchNormalization `j` in inference form (one output,
/// five inputs, not in training mode).
fn inference_form(w: &Work, j: usize) -> Option<f32> {
    let n = w.nodes[j].as_ref()?;
    if n.input.len() != 5
        || n.input.iter().any(|s| s.is_empty())
        || n.output.iter().skip(1).any(|o| !o.is_empty())
    {
        return None;
    }
    let attrs = Attrs::new(n);
    if attrs.int_or("training_mode", 0) != 0 || attrs.int("is_test") == Some(0) {
        return None;
    }
    Some(attrs.float_or("epsilon", 1e-5))
}

/// Scale and shift per channel of the BatchNormalization `j` when its
/// parameters are constants.
fn affine(w: &Work, j: usize, eps: f32) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = w.nodes[j].as_ref()?;
    let eps = eps as f64;
    let [scale, beta, mean, var] = [1, 2, 3, 4].map(|k| n.input.get(k).and_then(|s| f32_vec(w, s)));
    let (scale, beta, mean, var) = (scale?, beta?, mean?, var?);
    let m = scale.len();
    if m == 0 || beta.len() != m || mean.len() != m || var.len() != m {
        return None;
    }
    let s: Vec<f64> = scale
        .iter()
        .zip(&var)
        .map(|(&g, &v)| g as f64 / (v as f64 + eps).sqrt())
        .collect();
    let t = beta
        .iter()
        .zip(&mean)
        .zip(&s)
        .map(|((&b, &mu), &s)| b as f64 - mu as f64 * s)
        .collect();
    Some((s, t))
}

pub(super) fn run(w: &mut Work) -> usize {
    let mut count = 0;
    for i in 0..w.nodes.len() {
        if !w.is_op(i, "Conv") || w.epilogue[i].is_some() {
            continue;
        }
        let Some(conv) = w.nodes[i].as_ref() else {
            continue;
        };
        let Some(y) = conv.output.first().cloned() else {
            continue;
        };
        if conv.output.len() != 1 || !w.internal(&y) {
            continue;
        }
        let readers = w.consumers(&y);
        let [j] = readers[..] else { continue };
        if !w.is_op(j, "BatchNormalization")
            || w.nodes[j].as_ref().and_then(|n| n.input.first()) != Some(&y)
        {
            continue;
        }
        let Some(eps) = inference_form(w, j) else {
            continue;
        };
        let Some(out) = w.nodes[j].as_ref().and_then(|n| n.output.first().cloned()) else {
            continue;
        };
        let wname = conv.input.get(1).cloned().unwrap_or_default();
        let bname = conv.input.get(2).cloned().filter(|b| !b.is_empty());
        let constants = affine(w, j, eps).and_then(|(s, t)| {
            let bias = match &bname {
                Some(b) => f32_vec(w, b).filter(|v| v.len() == s.len())?,
                None => vec![0.0; s.len()],
            };
            Some((s, t, bias))
        });
        let Some((s, t, bias)) = constants else {
            // parameters computed at run time: the Conv reads them as
            // inputs 3 to 6 and derives its epilogue on each run
            let params: Vec<String> = w.nodes[j]
                .as_ref()
                .and_then(|n| n.input.get(1..5))
                .map(|s| s.to_vec())
                .unwrap_or_default();
            let Some(conv) = w.nodes[i].as_mut() else {
                continue;
            };
            conv.input.resize(3, String::new());
            conv.input.extend(params);
            conv.output[0] = out;
            w.epilogue[i] = Some(Epilogue {
                affine: None,
                act: Act::None,
                bn_eps: Some(eps),
                residual: false,
            });
            w.absorb(i, j);
            count += 1;
            continue;
        };
        let m = s.len();
        // new bias: (B - mean) * s + beta = B * s + t
        let shift: Vec<f32> = bias
            .iter()
            .zip(&s)
            .zip(&t)
            .map(|((&b, &s), &t)| (b as f64 * s + t) as f32)
            .collect();
        let weights = match w.constant(&wname) {
            Some(Value::Tensor(Tensor::F32(a))) if a.shape().first() == Some(&m) => {
                let per = a.len() / m;
                let data: Vec<f32> = a
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| (v as f64 * s[k / per.max(1)]) as f32)
                    .collect();
                ArrayD::from_shape_vec(IxDyn(a.shape()), data).ok()
            }
            _ => None,
        };
        let shift_t = ArrayD::from_shape_vec(IxDyn(&[m]), shift.clone()).ok();
        match (weights, shift_t) {
            (Some(wt), Some(bt)) => {
                let wn = w.fresh(&wname);
                let bn = w.fresh(&format!("{wname}_bias"));
                w.made.insert(wn.clone(), Value::Tensor(Tensor::F32(wt)));
                w.made.insert(bn.clone(), Value::Tensor(Tensor::F32(bt)));
                let Some(conv) = w.nodes[i].as_mut() else {
                    continue;
                };
                conv.input.truncate(1);
                conv.input.push(wn);
                conv.input.push(bn);
                conv.output[0] = out;
            }
            _ => {
                // weights computed at run time: scale the output instead
                let Some(conv) = w.nodes[i].as_mut() else {
                    continue;
                };
                conv.input.truncate(2);
                conv.output[0] = out;
                let scale = s.iter().map(|&v| v as f32).collect();
                w.epilogue[i] = Some(Epilogue {
                    affine: Some((scale, shift)),
                    act: Act::None,
                    bn_eps: None,
                    residual: false,
                });
            }
        }
        w.absorb(i, j);
        count += 1;
    }
    count
}
