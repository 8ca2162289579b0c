//! Whether a loop body hands a carried value on unchanged, even when it is
//! not written as the same name.
//!
//! Converters pass a loop's fixed tensors (encoder features, weights)
//! through the body with no-op arithmetic: Paddle2ONNX writes
//! `Squeeze(Add(Unsqueeze(x, [0]), 0), [0])`. The value is the same every
//! iteration, so the body steps that read only it can be computed once
//! ([`super::loop_op`] hoists them). The chains recognised here keep every
//! element and the shape:
//!
//! - `Identity`;
//! - `Add`/`Sub` of a constant of zeros, `Mul`/`Div` by a constant of ones,
//!   when the constant's shape cannot widen the other operand's (rank 0, or
//!   all ones and no higher rank than the `Unsqueeze` around it adds);
//! - `Unsqueeze(axes A)` … `Squeeze(axes A)` pairs around such steps.
//!
//! The one value these steps can change is the sign of a zero
//! (`-0 + 0 = +0`), which a hoisted run does not reproduce; every other
//! element is bit for bit the same.

use crate::ops::constant_value::constant_value;
use crate::ops::Attrs;
use crate::proto::{canonical_domain, GraphProto, NodeProto};
use crate::tensor::Tensor;
use std::collections::HashMap;

/// Steps followed back from an output before giving up.
const MAX_STEPS: usize = 32;

/// Whether body output `output` always equals body input `input`.
pub(super) fn passes_through(body: &GraphProto, output: &str, input: &str) -> bool {
    if output.is_empty() || input.is_empty() {
        return false;
    }
    let producer: HashMap<&str, &NodeProto> = body
        .node
        .iter()
        .flat_map(|n| n.output.iter().map(move |o| (o.as_str(), n)))
        .collect();
    let trace = Trace { body, producer };
    trace.follow(output, input, &mut Vec::new(), 0)
}

struct Trace<'a> {
    body: &'a GraphProto,
    producer: HashMap<&'a str, &'a NodeProto>,
}

impl Trace<'_> {
    /// Follows `name` back to `input`; `squeezed` holds the axes of the
    /// `Squeeze` steps passed whose `Unsqueeze` is still to come.
    fn follow(&self, name: &str, input: &str, squeezed: &mut Vec<Vec<i64>>, depth: usize) -> bool {
        if name == input {
            return squeezed.is_empty();
        }
        if depth >= MAX_STEPS {
            return false;
        }
        let Some(node) = self.producer.get(name) else {
            return false;
        };
        if !canonical_domain(node.domain()).is_empty() || node.output.len() != 1 {
            return false;
        }
        let arg = |i: usize| node.input.get(i).map(|s| s.as_str()).unwrap_or("");
        // rank the surrounding Unsqueeze steps guarantee
        let rank: usize = squeezed.iter().map(|a| a.len()).sum();
        let next =
            |squeezed: &mut Vec<Vec<i64>>, n: &str| self.follow(n, input, squeezed, depth + 1);
        match node.op_type() {
            "Identity" => next(squeezed, arg(0)),
            "Add" | "Mul" => {
                let neutral = if node.op_type() == "Add" { 0.0 } else { 1.0 };
                if self.is_neutral(arg(1), neutral, rank) {
                    next(squeezed, arg(0))
                } else if self.is_neutral(arg(0), neutral, rank) {
                    next(squeezed, arg(1))
                } else {
                    false
                }
            }
            "Sub" | "Div" => {
                let neutral = if node.op_type() == "Sub" { 0.0 } else { 1.0 };
                self.is_neutral(arg(1), neutral, rank) && next(squeezed, arg(0))
            }
            "Squeeze" => match self.axes(node) {
                Some(axes) => {
                    squeezed.push(axes);
                    let found = next(squeezed, arg(0));
                    squeezed.pop();
                    found
                }
                None => false,
            },
            "Unsqueeze" => match (squeezed.last(), self.axes(node)) {
                (Some(open), Some(axes)) if *open == axes => {
                    let open = squeezed.pop().expect("matched above");
                    let found = next(squeezed, arg(0));
                    squeezed.push(open);
                    found
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The axes of a Squeeze or Unsqueeze: the attribute (before opset
    /// 13) or a constant second input; only non-negative, sorted, distinct
    /// axes, so that equal lists mean the same dimensions on both sides.
    fn axes(&self, node: &NodeProto) -> Option<Vec<i64>> {
        let attrs = Attrs::new(node);
        let axes = match attrs.ints_checked("axes") {
            Ok(Some(a)) => a,
            Ok(None) => self.constant(node.input.get(1)?)?.to_i64_vec().ok()?,
            Err(_) => return None,
        };
        let ordered = axes.windows(2).all(|w| w[0] < w[1]);
        (!axes.is_empty() && ordered && axes[0] >= 0).then_some(axes)
    }

    /// Whether `name` is a constant whose every element is `value` and
    /// whose shape broadcasts into any operand of rank `rank` or more
    /// without widening it.
    fn is_neutral(&self, name: &str, value: f64, rank: usize) -> bool {
        let Some(t) = self.constant(name) else {
            return false;
        };
        let fits =
            t.shape().is_empty() || (t.shape().len() <= rank && t.shape().iter().all(|&d| d == 1));
        fits && t
            .to_f64_vec()
            .is_some_and(|v| v.iter().all(|&x| x == value))
    }

    /// A body Constant node's or initializer's value.
    fn constant(&self, name: &str) -> Option<Tensor> {
        if name.is_empty() {
            return None;
        }
        if let Some(node) = self.producer.get(name) {
            let plain = node.op_type() == "Constant"
                && canonical_domain(node.domain()).is_empty()
                && node.input.is_empty();
            return plain
                .then(|| constant_value(&Attrs::new(node)).ok())
                .flatten();
        }
        let init = self.body.initializer.iter().find(|t| t.name() == name)?;
        crate::proto::from_proto(init).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> GraphProto {
        let model = crate::text::parse_model(text).expect("test model parses");
        model.graph.expect("graph")
    }

    const HEADER: &str = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

    #[test]
    fn paddle_style_add_zero_between_unsqueeze_and_squeeze_passes_through() {
        let g = body(&format!(
            "{HEADER}g (float[2,3] x) => (float[2,3] y) {{
                ax = Constant <value = int64[1] {{0}}> ()
                z = Constant <value = float[1] {{0}}> ()
                u = Unsqueeze (x, ax)
                a = Add (u, z)
                y = Squeeze (a, ax)
            }}"
        ));
        assert!(passes_through(&g, "y", "x"));
    }

    #[test]
    fn a_nonzero_addend_or_unmatched_axes_do_not_pass_through() {
        let g = body(&format!(
            "{HEADER}g (float[2,3] x) => (float[2,3] y, float[2,3] w, float[1,2,3] v) {{
                ax = Constant <value = int64[1] {{0}}> ()
                ax1 = Constant <value = int64[1] {{1}}> ()
                one = Constant <value = float[1] {{1}}> ()
                zero = Constant <value = float[1] {{0}}> ()
                u = Unsqueeze (x, ax)
                a = Add (u, one)
                y = Squeeze (a, ax)
                b = Add (u, zero)
                w = Squeeze (b, ax1)
                v = Add (u, zero)
            }}"
        ));
        assert!(!passes_through(&g, "y", "x"), "x + 1 changes the value");
        assert!(!passes_through(&g, "w", "x"), "Squeeze of another axis");
        assert!(
            !passes_through(&g, "v", "x"),
            "an Unsqueeze left open changes the shape"
        );
    }

    #[test]
    fn a_zero_constant_that_would_widen_the_operand_does_not_pass_through() {
        // x is rank 2; a [1,1,1] zero would make the sum rank 3
        let g = body(&format!(
            "{HEADER}g (float[2,3] x) => (float[1,2,3] y, float[2,3] w) {{
                z3 = Constant <value = float[1,1,1] {{0}}> ()
                y = Add (x, z3)
                one = Constant <value = float {{1}}> ()
                w = Mul (one, x)
            }}"
        ));
        assert!(!passes_through(&g, "y", "x"));
        assert!(passes_through(&g, "w", "x"), "a scalar one keeps the shape");
    }
}
