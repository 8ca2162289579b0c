//! `fuse-conv-add`: an Add (or a Sum of two tensors) that is the only
//! reader of a Conv's output (the Conv has no fused activation yet) is
//! fused into the Conv:
//! - the other operand a float32 constant holding one value per output
//!   channel (shape [M,1,...], [1,M,1,...] or one value, of rank at most
//!   the Conv's): added to the Conv's bias (a new tensor, made once here),
//!   or to the shift of an affine epilogue;
//! - the other operand any other tensor (a residual, e.g. a ResNet
//!   shortcut): the Conv reads it as an extra input and adds it to each
//!   output tile before the activation. A residual whose shape differs
//!   from the output's at run time (a broadcasting Add) is added after the
//!   convolution instead.
//!
//! Several Adds in a row are fused one after the other.

use super::Work;
use crate::runtime::kernels::conv_epilogue::{Act, Epilogue, RESIDUAL_INPUT};
use crate::tensor::{Tensor, Value};
use ndarray::{ArrayD, IxDyn};

/// The float32 values of a constant.
fn f32_values(w: &Work, name: &str) -> Option<(Vec<usize>, Vec<f32>)> {
    w.f32_constant(name)
        .map(|a| (a.shape().to_vec(), a.iter().copied().collect()))
}

/// One value per output channel of a Conv whose weights have shape `ws`
/// (output rank = W's rank, channel axis 1), from a constant of shape
/// `cs` broadcast against the output without changing its shape.
fn per_channel(ws: &[usize], cs: &[usize], vals: &[f32]) -> Option<Vec<f32>> {
    let m = *ws.first()?;
    let rank = ws.len();
    if cs.len() > rank || rank < 3 {
        return None;
    }
    // the constant's axes, aligned to the output's last axes
    let lead = rank - cs.len();
    let mut channel_len = 1;
    for (k, &d) in cs.iter().enumerate() {
        let axis = lead + k;
        if axis == 1 && (d == m || d == 1) {
            channel_len = d;
        } else if d != 1 {
            return None;
        }
    }
    match (channel_len, vals.len()) {
        (1, 1) => Some(vec![vals[0]; m]),
        (c, n) if c == m && n == m => Some(vals.to_vec()),
        _ => None,
    }
}

/// The Add `j` reading `y`: its other operand and its output.
fn add_operands(w: &Work, j: usize, y: &str) -> Option<(String, String)> {
    let n = w.nodes[j].as_ref()?;
    let add = w.is_op(j, "Add") || (w.is_op(j, "Sum") && w.opset >= 8);
    if !add || n.input.len() != 2 || n.output.len() != 1 {
        return None;
    }
    let other = match (n.input[0] == y, n.input[1] == y) {
        (true, false) => n.input[1].clone(),
        (false, true) => n.input[0].clone(),
        _ => return None,
    };
    let out = n.output[0].clone();
    (!other.is_empty() && !out.is_empty()).then_some((other, out))
}

/// Fuses the Add after Conv `i`, if there is one that qualifies.
fn fuse_one(w: &mut Work, i: usize) -> bool {
    let Some(conv) = w.nodes[i].as_ref() else {
        return false;
    };
    if conv.output.len() != 1 {
        return false;
    }
    let y = conv.output[0].clone();
    let wname = conv.input.get(1).cloned().unwrap_or_default();
    let bname = conv.input.get(2).cloned().filter(|b| !b.is_empty());
    if !w.internal(&y) {
        return false;
    }
    let ep = w.epilogue[i].clone();
    if ep.as_ref().is_some_and(|e| e.act != Act::None) {
        return false;
    }
    let readers = w.consumers(&y);
    let [j] = readers[..] else {
        return false;
    };
    let Some((other, out)) = add_operands(w, j, &y) else {
        return false;
    };
    let wshape = match w.constant(&wname) {
        Some(Value::Tensor(t @ Tensor::F32(_))) => Some(t.shape().to_vec()),
        _ => None,
    };
    if let Some(Value::Tensor(c)) = w.constant(&other) {
        // a constant: per-channel bias, or nothing to fuse
        let Tensor::F32(_) = c else {
            return false;
        };
        let Some(ws) = wshape else {
            return false;
        };
        let Some((cs, vals)) = f32_values(w, &other) else {
            return false;
        };
        let Some(add) = per_channel(&ws, &cs, &vals) else {
            return false;
        };
        match ep {
            Some(e) if e.bn_eps.is_some() => return false,
            Some(Epilogue {
                affine: Some((s, t)),
                act,
                bn_eps,
                residual,
            }) => {
                if t.len() != add.len() {
                    return false;
                }
                let t = t.iter().zip(&add).map(|(&t, &a)| t + a).collect();
                w.epilogue[i] = Some(Epilogue {
                    affine: Some((s, t)),
                    act,
                    bn_eps,
                    residual,
                });
            }
            _ => {
                let bias = match &bname {
                    None => add,
                    Some(b) => match f32_values(w, b) {
                        Some((_, bv)) if bv.len() == add.len() => {
                            bv.iter().zip(&add).map(|(&b, &a)| b + a).collect()
                        }
                        _ => return false,
                    },
                };
                let Ok(bt) = ArrayD::from_shape_vec(IxDyn(&[bias.len()]), bias) else {
                    return false;
                };
                let bn = w.fresh(&format!("{wname}_bias"));
                w.made.insert(bn.clone(), Value::Tensor(Tensor::F32(bt)));
                let Some(conv) = w.nodes[i].as_mut() else {
                    return false;
                };
                conv.input.resize(3, String::new());
                conv.input[2] = bn;
            }
        }
    } else {
        // a residual
        if ep.as_ref().is_some_and(|e| e.residual) || other == y {
            return false;
        }
        let Some(conv) = w.nodes[i].as_mut() else {
            return false;
        };
        if conv.input.len() > RESIDUAL_INPUT {
            return false;
        }
        conv.input.resize(RESIDUAL_INPUT, String::new());
        conv.input.push(other);
        w.epilogue[i].get_or_insert_with(Epilogue::none).residual = true;
    }
    if let Some(conv) = w.nodes[i].as_mut() {
        conv.output[0] = out;
    }
    w.absorb(i, j);
    true
}

pub(super) fn run(w: &mut Work) -> usize {
    let mut count = 0;
    for i in 0..w.nodes.len() {
        if !w.is_op(i, "Conv") {
            continue;
        }
        while fuse_one(w, i) {
            count += 1;
        }
    }
    count
}
