//! The order nodes run in, and what each reads.

use super::NodeLabel;
use crate::proto::{GraphProto, NodeProto};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt;

/// Names a node reads from enclosing scopes through its subgraphs (the
/// bodies of Loop, Scan, If ...), sorted, each once.
pub fn implicit_inputs(n: &NodeProto) -> Vec<String> {
    let mut out = vec![];
    for a in &n.attribute {
        for sg in a.g.iter().chain(a.graphs.iter()) {
            graph_free(sg, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The names `g` reads without defining them (its free names).
fn graph_free(g: &GraphProto, out: &mut Vec<String>) {
    let mut defined: HashSet<&str> = HashSet::new();
    defined.extend(g.input.iter().map(|i| i.name()));
    defined.extend(g.initializer.iter().map(|t| t.name()));
    for n in &g.node {
        defined.extend(n.output.iter().map(|o| o.as_str()));
    }
    for n in &g.node {
        for i in &n.input {
            if !i.is_empty() && !defined.contains(i.as_str()) {
                out.push(i.clone());
            }
        }
        for a in &n.attribute {
            let mut inner = vec![];
            for sg in a.g.iter().chain(a.graphs.iter()) {
                graph_free(sg, &mut inner);
            }
            out.extend(inner.into_iter().filter(|x| !defined.contains(x.as_str())));
        }
    }
    for o in &g.output {
        if !defined.contains(o.name()) {
            out.push(o.name().to_string());
        }
    }
}

/// Why a node list has no order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OrderError {
    /// Node `node` reads `name`, which nothing provides.
    Missing { node: usize, name: String },
    /// Node `node` (the first in file order that cannot run) waits on
    /// itself through a cycle.
    Cycle { node: usize },
}

impl OrderError {
    /// The message, naming the node as `label` gives it.
    pub fn describe(&self, label: impl Fn(usize) -> String) -> String {
        match self {
            OrderError::Missing { node, name } => format!(
                "{} reads '{name}', which no input, initializer or node provides",
                label(*node)
            ),
            OrderError::Cycle { node } => {
                format!("the graph has a cycle: {} cannot run", label(*node))
            }
        }
    }

    /// The message for the nodes of `nodes`.
    pub fn describe_nodes(&self, nodes: &[NodeProto]) -> String {
        self.describe(|i| match nodes.get(i) {
            Some(n) => NodeLabel::of(i, n).to_string(),
            None => format!("node {i}"),
        })
    }
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(|i| format!("node {i}")))
    }
}

/// A node list put in running order.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    /// Node indices in the order they run: topological, and among the nodes
    /// ready at a time the first in file order (a sorted graph runs as
    /// written).
    pub order: Vec<usize>,
    /// Per node (by index): the names it reads, explicit inputs first, then
    /// those its subgraphs read from enclosing scopes.
    pub needs: Vec<Vec<String>>,
    /// Per position in `order`: the intermediates whose last reader is that
    /// node, in the order the node reads them.
    pub release: Vec<Vec<String>>,
}

impl Schedule {
    /// Orders `nodes`. `available` are the names defined before any node
    /// runs (graph inputs, initializers); `keep` the names never released
    /// (those, and the graph outputs). In a subgraph (`nested`) a name no
    /// node produces comes from an enclosing scope; in a main graph it is an
    /// error.
    pub fn build(
        nodes: &[NodeProto],
        available: &HashSet<&str>,
        keep: &HashSet<&str>,
        nested: bool,
    ) -> Result<Schedule, OrderError> {
        let needs: Vec<Vec<String>> = nodes
            .iter()
            .map(|n| {
                n.input
                    .iter()
                    .filter(|s| !s.is_empty())
                    .cloned()
                    .chain(implicit_inputs(n))
                    .collect()
            })
            .collect();
        let produced: HashSet<&str> = nodes
            .iter()
            .flat_map(|n| n.output.iter().map(|s| s.as_str()))
            .filter(|s| !s.is_empty())
            .collect();
        for (i, need) in needs.iter().enumerate() {
            if let Some(name) = need.iter().find(|s| {
                !nested && !available.contains(s.as_str()) && !produced.contains(s.as_str())
            }) {
                return Err(OrderError::Missing {
                    node: i,
                    name: name.clone(),
                });
            }
        }

        // Kahn's algorithm with the smallest ready index first. A node waits
        // on each distinct name it reads that a node produces and that is
        // not available from the start.
        let mut waiters: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut waiting = vec![0usize; nodes.len()];
        let mut ready = BinaryHeap::new();
        for (i, need) in needs.iter().enumerate() {
            let mut seen: HashSet<&str> = HashSet::new();
            for s in need {
                let s = s.as_str();
                if produced.contains(s) && !available.contains(s) && seen.insert(s) {
                    waiters.entry(s).or_default().push(i);
                    waiting[i] += 1;
                }
            }
            if waiting[i] == 0 {
                ready.push(Reverse(i));
            }
        }
        let mut order = Vec::with_capacity(nodes.len());
        while let Some(Reverse(i)) = ready.pop() {
            order.push(i);
            for o in &nodes[i].output {
                // the first producer of a name makes it available
                if let Some(ws) = waiters.remove(o.as_str()) {
                    for w in ws {
                        waiting[w] -= 1;
                        if waiting[w] == 0 {
                            ready.push(Reverse(w));
                        }
                    }
                }
            }
        }
        if order.len() < nodes.len() {
            let mut done = vec![false; nodes.len()];
            for &i in &order {
                done[i] = true;
            }
            let node = done.iter().position(|d| !d).unwrap_or(0);
            return Err(OrderError::Cycle { node });
        }

        // the last reader of every intermediate
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (pos, &i) in order.iter().enumerate() {
            for name in &needs[i] {
                if produced.contains(name.as_str()) && !keep.contains(name.as_str()) {
                    last.insert(name.as_str(), pos);
                }
            }
        }
        let mut by_pos: Vec<(&str, usize)> = last.into_iter().collect();
        by_pos.sort_by_key(|&(name, pos)| {
            let k = needs[order[pos]].iter().position(|s| s == name);
            (pos, k.unwrap_or(0))
        });
        let mut release: Vec<Vec<String>> = vec![vec![]; order.len()];
        for (name, pos) in by_pos {
            release[pos].push(name.to_string());
        }
        Ok(Schedule {
            order,
            needs,
            release,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn set<'a>(names: &[&'a str]) -> HashSet<&'a str> {
        names.iter().copied().collect()
    }

    #[test]
    fn a_sorted_graph_runs_as_written_and_releases_at_last_use() {
        let nodes = [
            node("Relu", &["x"], &["a"]),
            node("Neg", &["a"], &["b"]),
            node("Add", &["a", "b"], &["y"]),
        ];
        let s = Schedule::build(&nodes, &set(&["x"]), &set(&["x", "y"]), false).unwrap();
        assert_eq!(s.order, vec![0, 1, 2]);
        assert_eq!(
            s.release,
            vec![vec![], vec![], vec!["a".to_string(), "b".into()]]
        );
    }

    #[test]
    fn an_unsorted_graph_is_ordered_by_its_dependencies() {
        let nodes = [
            node("Neg", &["b"], &["y"]),
            node("Relu", &["a"], &["b"]),
            node("Abs", &["x"], &["a"]),
            node("Sin", &["x"], &["z"]),
        ];
        let s = Schedule::build(&nodes, &set(&["x"]), &set(&["x", "y", "z"]), false).unwrap();
        assert_eq!(s.order, vec![2, 1, 0, 3]);
    }

    #[test]
    fn a_long_reversed_chain_is_ordered_in_linear_passes() {
        // 20000 nodes written last-first: ordering stays quick
        let n = 20_000;
        let nodes: Vec<NodeProto> = (0..n)
            .map(|i| {
                let k = n - 1 - i;
                let input = if k == 0 {
                    "x".to_string()
                } else {
                    format!("v{}", k - 1)
                };
                node("Neg", &[input.as_str()], &[format!("v{k}").as_str()])
            })
            .collect();
        let s = Schedule::build(&nodes, &set(&["x"]), &set(&["x"]), false).unwrap();
        assert_eq!(s.order.first(), Some(&(n - 1)));
        assert_eq!(s.order.last(), Some(&0));
    }

    #[test]
    fn cycles_and_missing_names_are_errors_naming_the_node() {
        let nodes = [node("Neg", &["b"], &["a"]), node("Neg", &["a"], &["b"])];
        let e = Schedule::build(&nodes, &set(&[]), &set(&[]), false).unwrap_err();
        assert_eq!(e, OrderError::Cycle { node: 0 });
        assert_eq!(
            e.describe_nodes(&nodes),
            "the graph has a cycle: node 0 (Neg) cannot run"
        );
        let nodes = [node("Neg", &["q"], &["a"])];
        let e = Schedule::build(&nodes, &set(&[]), &set(&[]), false).unwrap_err();
        assert_eq!(
            e.describe_nodes(&nodes),
            "node 0 (Neg) reads 'q', which no input, initializer or node provides"
        );
        // inside a subgraph the name comes from an enclosing scope
        assert!(Schedule::build(&nodes, &set(&[]), &set(&[]), true).is_ok());
    }
}
