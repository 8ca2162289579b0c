//! `fuse-conv-activation`: an elementwise activation that is the only
//! reader of a Conv's output (Relu, Clip with constant bounds, LeakyRelu,
//! HardSigmoid, HardSwish, Sigmoid, and Sigmoid + Mul reading the same
//! value, SiLU) runs inside the Conv, on each output tile as it is
//! finished.

use super::Work;
use crate::ops::Attrs;
use crate::proto::NodeProto;
use crate::runtime::kernels::conv_epilogue::{Act, Epilogue};
use crate::tensor::{Tensor, Value};

/// A constant float32 scalar bound; `Some(None)` when absent.
fn bound(w: &Work, n: &NodeProto, k: usize) -> Option<Option<f32>> {
    match n.input.get(k).filter(|s| !s.is_empty()) {
        None => Some(None),
        Some(name) => match w.constant(name)? {
            Value::Tensor(Tensor::F32(a)) if a.len() == 1 => a.iter().next().map(|&v| Some(v)),
            _ => None,
        },
    }
}

/// The activation node `j` computes, reading `y` as its only input.
fn activation(w: &Work, j: usize, y: &str) -> Option<Act> {
    let n = w.nodes[j].as_ref()?;
    if n.input.first().map(|s| s.as_str()) != Some(y) || n.output.len() != 1 {
        return None;
    }
    let op = n.op_type();
    if !w.is_op(j, op) {
        return None;
    }
    let attrs = Attrs::new(n);
    Some(match op {
        "Relu" => Act::Relu,
        "LeakyRelu" => Act::LeakyRelu(attrs.float_or("alpha", 0.01)),
        "HardSigmoid" => {
            Act::HardSigmoid(attrs.float_or("alpha", 0.2), attrs.float_or("beta", 0.5))
        }
        "HardSwish" => Act::HardSwish,
        "Sigmoid" => Act::Sigmoid,
        "Clip" if w.opset < 11 => Act::Clip(
            Some(attrs.float_or("min", f32::MIN)),
            Some(attrs.float_or("max", f32::MAX)),
        ),
        "Clip" => Act::Clip(bound(w, n, 1)?, bound(w, n, 2)?),
        _ => return None,
    })
}

pub(super) fn run(w: &mut Work) -> usize {
    let mut count = 0;
    for i in 0..w.nodes.len() {
        if !w.is_op(i, "Conv") {
            continue;
        }
        if w.epilogue[i].as_ref().is_some_and(|e| e.act != Act::None) {
            continue;
        }
        let Some(y) = w.nodes[i].as_ref().and_then(|n| n.output.first().cloned()) else {
            continue;
        };
        if !w.internal(&y) || w.nodes[i].as_ref().is_some_and(|n| n.output.len() != 1) {
            continue;
        }
        let readers = w.consumers(&y);
        let (act, absorbed, out) = match readers[..] {
            [j] => match activation(w, j, &y) {
                Some(a) => {
                    let out = w.nodes[j].as_ref().map(|n| n.output[0].clone());
                    (a, vec![j], out)
                }
                None => continue,
            },
            [a, b] => {
                // SiLU: Sigmoid(y) read only by a Mul of y and itself
                let (sig, mul) = if w.is_op(a, "Sigmoid") {
                    (a, b)
                } else {
                    (b, a)
                };
                if activation(w, sig, &y) != Some(Act::Sigmoid) || !w.is_op(mul, "Mul") {
                    continue;
                }
                let Some(s) = w.nodes[sig].as_ref().map(|n| n.output[0].clone()) else {
                    continue;
                };
                let Some(m) = w.nodes[mul].as_ref() else {
                    continue;
                };
                let ins = m.input.clone();
                let pair = ins.len() == 2
                    && ((ins[0] == y && ins[1] == s) || (ins[0] == s && ins[1] == y));
                if !pair || !w.internal(&s) || w.consumers(&s) != [mul] || m.output.len() != 1 {
                    continue;
                }
                (Act::Silu, vec![sig, mul], Some(m.output[0].clone()))
            }
            _ => continue,
        };
        let Some(out) = out.filter(|o| !o.is_empty()) else {
            continue;
        };
        if let Some(conv) = w.nodes[i].as_mut() {
            conv.output[0] = out;
        }
        let e = w.epilogue[i].get_or_insert(Epilogue {
            affine: None,
            act: Act::None,
            bn_eps: None,
            residual: false,
        });
        e.act = act;
        for j in absorbed {
            w.absorb(i, j);
        }
        count += 1;
    }
    count
}
