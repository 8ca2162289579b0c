//! Plan-time graph rewriting passes. Each pass is a named rewrite of the
//! main graph's node list, run in the order of [`PASSES`] when the plan is
//! built; the plan then holds two step lists: the graph as written (run
//! whenever the run is observed: events, the debugger, a value observer,
//! or release off, where the caller reads every intermediate from `held`)
//! and the rewritten one (run otherwise). An observed run therefore sees
//! every original node and value, and its event log is the same as without
//! the passes; an unobserved run's outputs are the same within float
//! rounding. Subgraphs (Loop, If, Scan bodies) are not rewritten.
//!
//! Weights are read from the plan's initializers and never changed: a
//! rewritten weight is a new tensor (one copy, made once here).

mod bn_fold;
mod conv_act;
mod conv_add;
mod hardswish;
mod identity;
mod unused_constants;

use crate::graph::NodeLabel;
use crate::proto::NodeProto;
use crate::runtime::kernels::conv_epilogue::Epilogue;
use crate::tensor::Value;
use crate::tensor::ValueMap;
use std::collections::HashSet;

/// One pass: its name and the rewrite (returns how many places it changed).
pub(crate) struct Pass {
    pub name: &'static str,
    pub run: fn(&mut Work) -> usize,
}

/// The passes, in the order they run.
pub(crate) const PASSES: &[Pass] = &[
    Pass {
        name: "remove-identity",
        run: identity::run,
    },
    Pass {
        name: "fold-batchnorm",
        run: bn_fold::run,
    },
    Pass {
        name: "fuse-hardswish-pattern",
        run: hardswish::run,
    },
    Pass {
        name: "fuse-conv-add",
        run: conv_add::run,
    },
    Pass {
        name: "fuse-conv-activation",
        run: conv_act::run,
    },
    Pass {
        name: "drop-unused-constants",
        run: unused_constants::run,
    },
];

/// The graph being rewritten.
pub(crate) struct Work<'a> {
    /// Nodes in file order; `None` once removed.
    pub nodes: Vec<Option<NodeProto>>,
    /// Per node: the original nodes it stands for (labels) and the
    /// operators fused into it, in order.
    pub covers: Vec<Vec<String>>,
    pub fused_ops: Vec<Vec<String>>,
    /// Per node: the fused Conv epilogue.
    pub epilogue: Vec<Option<Epilogue>>,
    /// The graph's initializers (read only).
    pub init: &'a ValueMap,
    /// Graph inputs: an initializer that is also an input can be given
    /// per run; the rewrites that read one are recorded in `overridable`.
    pub inputs: HashSet<String>,
    /// Graph inputs with an initializer default that a rewrite read as
    /// constant: a run that gives one of them runs the graph as written.
    pub overridable: std::cell::RefCell<HashSet<String>>,
    pub outputs: HashSet<String>,
    /// Tensors made by the passes (rewritten weights).
    pub made: ValueMap,
    /// The values of the graph's Constant nodes (read only, like `init`).
    pub consts: ValueMap,
    /// Every name in use (for fresh names).
    pub names: HashSet<String>,
    /// Names read by nodes through subgraphs: never renamed or removed.
    pub implicit: HashSet<String>,
    /// Opset of the default domain.
    pub opset: i64,
}

/// The rewritten graph.
pub(crate) struct Rewritten {
    pub nodes: Vec<NodeProto>,
    /// Per rewritten node: its index in the original graph.
    pub origin: Vec<usize>,
    pub covers: Vec<Vec<String>>,
    pub fused_ops: Vec<Vec<String>>,
    pub epilogue: Vec<Option<Epilogue>>,
    pub made: ValueMap,
    /// Graph inputs a rewrite read as constants (their initializer default).
    pub overridable: HashSet<String>,
    /// Per pass: name and number of rewrites.
    pub counts: Vec<(&'static str, usize)>,
}

impl Work<'_> {
    /// Live nodes reading `name` (each once).
    pub fn consumers(&self, name: &str) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                n.as_ref()
                    .filter(|n| n.input.iter().any(|s| s == name))
                    .map(|_| i)
            })
            .collect()
    }

    /// A float32 constant (see [`Work::constant`]).
    pub fn f32_constant(&self, name: &str) -> Option<&ndarray::ArrayD<f32>> {
        match self.constant(name)? {
            Value::Tensor(crate::tensor::Tensor::F32(a)) => Some(a),
            _ => None,
        }
    }

    /// An initializer, a tensor a pass made or a Constant node's value. An
    /// initializer that is also a graph input is recorded in `overridable`
    /// (read it only to use it).
    pub fn constant(&self, name: &str) -> Option<&Value> {
        if name.is_empty() {
            return None;
        }
        let v = self
            .init
            .get(name)
            .or_else(|| self.made.get(name))
            .or_else(|| self.consts.get(name))?;
        if self.inputs.contains(name) {
            self.overridable.borrow_mut().insert(name.to_string());
        }
        Some(v)
    }

    /// `name` may disappear: no graph output, no subgraph reads it.
    pub fn internal(&self, name: &str) -> bool {
        !name.is_empty() && !self.outputs.contains(name) && !self.implicit.contains(name)
    }

    /// A default-domain node of this type.
    pub fn is_op(&self, i: usize, op: &str) -> bool {
        self.nodes[i].as_ref().is_some_and(|n| {
            n.op_type() == op && crate::proto::canonical_domain(n.domain()).is_empty()
        })
    }

    /// A name not used anywhere in the graph.
    pub fn fresh(&mut self, base: &str) -> String {
        let mut k = 0;
        loop {
            let n = format!("{base}__fused{k}");
            if self.names.insert(n.clone()) {
                return n;
            }
            k += 1;
        }
    }

    /// Node `into` takes over node `from`: `from` is removed and what it
    /// covered is added to `into`.
    pub fn absorb(&mut self, into: usize, from: usize) {
        let covers = std::mem::take(&mut self.covers[from]);
        self.covers[into].extend(covers);
        let ops = std::mem::take(&mut self.fused_ops[from]);
        self.fused_ops[into].extend(ops);
        self.nodes[from] = None;
    }
}

/// The value of each default-domain Constant node (those whose value
/// cannot be read are left out: the passes treat them as unknown).
fn constant_nodes(graph: &crate::proto::GraphProto) -> ValueMap {
    graph
        .node
        .iter()
        .filter(|n| {
            n.op_type() == "Constant"
                && crate::proto::canonical_domain(n.domain()).is_empty()
                && n.input.is_empty()
                && n.output.len() == 1
                && !n.output[0].is_empty()
        })
        .filter_map(|n| {
            let t = crate::ops::constant_value::constant_value(&crate::ops::Attrs::new(n)).ok()?;
            Some((n.output[0].clone(), Value::Tensor(t)))
        })
        .collect()
}

/// Runs every pass over a main graph; `None` when nothing changed.
pub(crate) fn rewrite(
    graph: &crate::proto::GraphProto,
    init: &ValueMap,
    implicit: HashSet<String>,
    opset: i64,
) -> Option<Rewritten> {
    let mut names: HashSet<String> = HashSet::new();
    names.extend(graph.input.iter().map(|i| i.name().to_string()));
    names.extend(graph.output.iter().map(|i| i.name().to_string()));
    names.extend(init.keys().cloned());
    for n in &graph.node {
        names.extend(n.input.iter().chain(&n.output).cloned());
    }
    let mut w = Work {
        nodes: graph.node.iter().cloned().map(Some).collect(),
        covers: graph
            .node
            .iter()
            .enumerate()
            .map(|(i, n)| vec![NodeLabel::of(i, n).short()])
            .collect(),
        fused_ops: graph
            .node
            .iter()
            .map(|n| vec![n.op_type().to_string()])
            .collect(),
        epilogue: vec![None; graph.node.len()],
        init,
        inputs: graph.input.iter().map(|i| i.name().to_string()).collect(),
        overridable: Default::default(),
        outputs: graph.output.iter().map(|o| o.name().to_string()).collect(),
        made: ValueMap::default(),
        consts: constant_nodes(graph),
        names,
        implicit,
        opset,
    };
    let counts: Vec<(&'static str, usize)> =
        PASSES.iter().map(|p| (p.name, (p.run)(&mut w))).collect();
    if counts.iter().all(|&(_, c)| c == 0) {
        return None;
    }
    let mut out = Rewritten {
        nodes: vec![],
        origin: vec![],
        covers: vec![],
        fused_ops: vec![],
        epilogue: vec![],
        made: w.made,
        overridable: w.overridable.take(),
        counts,
    };
    for (i, n) in w.nodes.into_iter().enumerate() {
        if let Some(n) = n {
            out.nodes.push(n);
            out.origin.push(i);
            out.covers.push(std::mem::take(&mut w.covers[i]));
            out.fused_ops.push(std::mem::take(&mut w.fused_ops[i]));
            out.epilogue.push(w.epilogue[i].take());
        }
    }
    Some(out)
}
