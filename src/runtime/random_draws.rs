//! Backend cases whose expected values are random draws (numpy's generator
//! in the ONNX test generator): Bernoulli, RandomUniform(Like),
//! RandomNormal(Like), Multinomial, and Dropout in training mode. Their
//! values cannot be compared; what can be checked is checked instead, and a
//! case that passes these checks is reported as skipped, not passed:
//!
//! - every output has the expected element type and shape;
//! - an output whose expected elements are all 0 or 1 has only 0s and 1s;
//! - Bernoulli: the count of ones is within 4 standard deviations (plus
//!   one) of the sum of the input probabilities;
//! - Dropout (training, ratio r): each output element is 0 or x / (1 - r)
//!   within the tolerance, the mask agrees with it, and the dropped fraction
//!   is within 4 standard deviations (plus one element) of r.

use super::tolerance::Tolerance;
use crate::proto::{GraphProto, NodeProto};
use crate::tensor::{Tensor, Value};
use std::collections::HashMap;

/// What a skipped random case reports.
pub const SKIP_REASON: &str = "expected values are numpy random draws";

/// The top-level nodes of `graph` that draw random numbers: the operators
/// the table marks nondeterministic (Dropout counts only when its
/// training_mode input is given).
pub fn random_nodes(graph: &GraphProto) -> Vec<&NodeProto> {
    graph
        .node
        .iter()
        .filter(|n| {
            !crate::ops::is_deterministic(n.domain(), n.op_type())
                && (n.op_type() != "Dropout" || n.input.len() > 2)
        })
        .collect()
}

fn nums(t: &Tensor) -> Option<Vec<f64>> {
    match t {
        Tensor::Bool(a) => Some(a.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect()),
        _ => t.to_f64_vec(),
    }
}

fn tensor(v: Option<&Value>) -> Option<&Tensor> {
    match v {
        Some(Value::Tensor(t)) => Some(t),
        _ => None,
    }
}

/// Checks a random case's produced outputs. `Ok` holds what was checked
/// (for the skip message); `Err` what is wrong.
pub fn check<S: std::hash::BuildHasher>(
    graph: &GraphProto,
    feed: &HashMap<String, Value, S>,
    got: &[(String, Value)],
    want: &[Option<Value>],
    tol: &Tolerance,
) -> Result<String, String> {
    let nodes = random_nodes(graph);
    if nodes.is_empty() {
        return Err("no random operator".into());
    }
    let mut checked = vec!["shape and type".to_string()];
    let produced: HashMap<&str, &Value> = got.iter().map(|(n, v)| (n.as_str(), v)).collect();
    // type and shape of every output; 0/1 outputs stay 0/1
    let mut binary = false;
    for ((name, g), w) in got.iter().zip(want) {
        let Some(w) = w else { continue };
        let (Value::Tensor(gt), Value::Tensor(wt)) = (g, w) else {
            if g.describe() != w.describe() {
                return Err(format!(
                    "output '{name}': got {}, expected {}",
                    g.describe(),
                    w.describe()
                ));
            }
            continue;
        };
        if gt.dtype() != wt.dtype() {
            return Err(format!(
                "output '{name}': type {}, expected {}",
                gt.dtype(),
                wt.dtype()
            ));
        }
        if gt.shape() != wt.shape() {
            return Err(format!(
                "output '{name}': shape {:?}, expected {:?}",
                gt.shape(),
                wt.shape()
            ));
        }
        let (Some(gv), Some(wv)) = (nums(gt), nums(wt)) else {
            continue;
        };
        if !wv.is_empty() && wv.iter().all(|&x| x == 0.0 || x == 1.0) {
            binary = true;
            if let Some(i) = gv.iter().position(|&x| x != 0.0 && x != 1.0) {
                return Err(format!(
                    "output '{name}': element {i} is {}, expected a draw of 0 or 1",
                    gv[i]
                ));
            }
        }
    }
    if binary {
        checked.push("values in {0, 1}".into());
    }
    for n in nodes {
        match n.op_type() {
            "Bernoulli" => {
                if let Some(what) = check_bernoulli(n, feed, &produced)? {
                    checked.push(what);
                }
            }
            "Dropout" => {
                if let Some(what) = check_dropout(n, feed, &produced, tol)? {
                    checked.push(what);
                }
            }
            _ => {}
        }
    }
    Ok(checked.join(", "))
}

/// The largest distance from its mean allowed for a count of `n` draws
/// with variance `var` (4 standard deviations plus one).
fn count_slack(var: f64) -> f64 {
    4.0 * var.max(0.0).sqrt() + 1.0
}

fn check_bernoulli<S: std::hash::BuildHasher>(
    n: &NodeProto,
    feed: &HashMap<String, Value, S>,
    produced: &HashMap<&str, &Value>,
) -> Result<Option<String>, String> {
    let (Some(p), Some(y)) = (
        n.input.first().and_then(|i| tensor(feed.get(i.as_str()))),
        n.output
            .first()
            .and_then(|o| tensor(produced.get(o.as_str()).copied())),
    ) else {
        return Ok(None);
    };
    let (Some(p), Some(y)) = (nums(p), nums(y)) else {
        return Ok(None);
    };
    if p.len() != y.len() {
        return Err(format!(
            "Bernoulli: {} draws for {} probabilities",
            y.len(),
            p.len()
        ));
    }
    let ones: f64 = y.iter().sum();
    let mean: f64 = p.iter().sum();
    let var: f64 = p.iter().map(|q| q * (1.0 - q)).sum();
    if (ones - mean).abs() > count_slack(var) {
        return Err(format!(
            "Bernoulli: {ones} ones in {} draws, expected about {mean:.2}",
            y.len()
        ));
    }
    Ok(Some(format!(
        "{ones} ones in {} draws (expected {mean:.2})",
        y.len()
    )))
}

fn check_dropout<S: std::hash::BuildHasher>(
    n: &NodeProto,
    feed: &HashMap<String, Value, S>,
    produced: &HashMap<&str, &Value>,
    tol: &Tolerance,
) -> Result<Option<String>, String> {
    let input = |i: usize| {
        n.input
            .get(i)
            .filter(|s| !s.is_empty())
            .and_then(|s| tensor(feed.get(s.as_str())))
    };
    let output = |i: usize| {
        n.output
            .get(i)
            .filter(|s| !s.is_empty())
            .and_then(|s| tensor(produced.get(s.as_str()).copied()))
    };
    let (Some(x), Some(y)) = (input(0).and_then(nums), output(0).and_then(nums)) else {
        return Ok(None);
    };
    let ratio = match input(1).and_then(nums) {
        Some(r) => match r.first() {
            Some(&r) => r,
            None => return Ok(None),
        },
        None => 0.5,
    };
    let training = input(2)
        .and_then(nums)
        .and_then(|t| t.first().copied())
        .is_some_and(|t| t != 0.0);
    if !training || !(0.0..1.0).contains(&ratio) || x.len() != y.len() {
        return Ok(None);
    }
    let mask = output(1).and_then(nums);
    let scale = 1.0 / (1.0 - ratio);
    let mut dropped = 0usize;
    for (i, (&xi, &yi)) in x.iter().zip(&y).enumerate() {
        let kept = xi * scale;
        let is_kept = (yi - kept).abs() <= tol.atol + tol.rtol * kept.abs();
        let is_dropped = yi == 0.0;
        if !is_kept && !is_dropped {
            return Err(format!(
                "Dropout: element {i} is {yi}, neither 0 nor {kept} (x / (1 - ratio))"
            ));
        }
        let kept_by_mask = match &mask {
            Some(m) => {
                let mi = m.get(i).copied().unwrap_or(0.0) != 0.0;
                if (mi && !is_kept) || (!mi && !is_dropped) {
                    return Err(format!("Dropout: element {i} is {yi} but its mask is {mi}"));
                }
                mi
            }
            None => !is_dropped || xi == 0.0,
        };
        if !kept_by_mask {
            dropped += 1;
        }
    }
    let count = x.len() as f64;
    let want = ratio * count;
    if (dropped as f64 - want).abs() > count_slack(count * ratio * (1.0 - ratio)) {
        return Err(format!(
            "Dropout: {dropped} of {} elements dropped, expected about {want:.1} (ratio {ratio})",
            x.len()
        ));
    }
    Ok(Some(format!(
        "{dropped} of {} dropped (ratio {ratio}), kept ones scaled by {scale}",
        x.len()
    )))
}
