//! `remove-identity`: Identity, and Dropout in inference mode, removed; the
//! nodes that read the output read the input instead. Kept when the output
//! is a graph output or read by a subgraph, and for a Dropout whose
//! training mode is not a constant false or whose mask is used.

use super::Work;
use crate::tensor::Tensor;

fn false_constant(w: &Work, name: &str) -> bool {
    match w.constant(name) {
        Some(crate::tensor::Value::Tensor(Tensor::Bool(a))) => {
            a.len() == 1 && a.iter().all(|&b| !b)
        }
        _ => false,
    }
}

fn removable(w: &Work, i: usize) -> Option<(String, String)> {
    let n = w.nodes[i].as_ref()?;
    let x = n.input.first().filter(|s| !s.is_empty())?.clone();
    let o = n.output.first().filter(|s| !s.is_empty())?.clone();
    if !w.internal(&o) || x == o {
        return None;
    }
    if w.is_op(i, "Identity") {
        return (n.input.len() == 1 && n.output.len() == 1).then_some((x, o));
    }
    if !w.is_op(i, "Dropout") {
        return None;
    }
    if w.opset < 7 {
        let is_test = n
            .attribute
            .iter()
            .find(|a| a.name() == "is_test")
            .map(|a| a.i())
            .unwrap_or(0);
        if is_test == 0 {
            return None;
        }
    }
    if let Some(t) = n.input.get(2).filter(|s| !s.is_empty()) {
        if !false_constant(w, t) {
            return None;
        }
    }
    if let Some(mask) = n.output.get(1).filter(|s| !s.is_empty()) {
        if !w.internal(mask) || !w.consumers(mask).is_empty() {
            return None;
        }
    }
    Some((x, o))
}

pub(super) fn run(w: &mut Work) -> usize {
    let mut count = 0;
    for i in 0..w.nodes.len() {
        let Some((x, o)) = removable(w, i) else {
            continue;
        };
        for c in w.consumers(&o) {
            if let Some(n) = w.nodes[c].as_mut() {
                for s in n.input.iter_mut().filter(|s| **s == o) {
                    *s = x.clone();
                }
            }
            let label = w.covers[i].clone();
            w.covers[c].extend(label);
        }
        w.nodes[i] = None;
        count += 1;
    }
    count
}
