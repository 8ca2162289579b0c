//! What the last run used, read off its event log: time per operator type
//! and per node (`profile`), and the bytes of live values after each node
//! (`memory`).

use super::events::{Event, EventAction, EventNode};
use std::collections::HashMap;

/// Time spent in one operator type (or one node, with `node`).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeShare {
    pub op_type: String,
    /// The node, for per-node rows.
    pub node: Option<EventNode>,
    pub count: usize,
    pub total_us: u64,
    /// Of the time of every node of the run, in [0, 1].
    pub share: f64,
}

/// Per operator type (`by_node` false) or per node: the time of the main
/// graph's nodes (a Loop, Scan or If node's time includes its bodies'
/// nodes), sorted by time, largest first; shares are of their sum.
pub fn time_shares(events: &[Event], by_node: bool) -> Vec<TimeShare> {
    let runs = || {
        events
            .iter()
            .filter(|e| e.action == EventAction::RunNode)
            .filter_map(|e| Some((e, e.node.as_ref()?, e.elapsed_us.unwrap_or(0))))
    };
    let total: u64 = runs()
        .filter(|(e, _, _)| e.depth == 0)
        .map(|(_, _, t)| t)
        .sum();
    let mut rows: Vec<TimeShare> = if by_node {
        runs()
            .filter(|(e, _, _)| e.depth == 0)
            .map(|(_, n, t)| TimeShare {
                op_type: n.op_type.clone(),
                node: Some(n.clone()),
                count: 1,
                total_us: t,
                share: 0.0,
            })
            .collect()
    } else {
        let mut by_type: HashMap<&str, (usize, u64)> = HashMap::new();
        for (e, n, t) in runs() {
            // a body's nodes are inside their Loop's time: count them once
            if e.depth > 0 {
                continue;
            }
            let slot = by_type.entry(n.op_type.as_str()).or_default();
            slot.0 += 1;
            slot.1 += t;
        }
        by_type
            .into_iter()
            .map(|(op, (count, t))| TimeShare {
                op_type: op.to_string(),
                node: None,
                count,
                total_us: t,
                share: 0.0,
            })
            .collect()
    };
    for r in &mut rows {
        r.share = if total > 0 {
            r.total_us as f64 / total as f64
        } else {
            0.0
        };
    }
    rows.sort_by(|a, b| {
        b.total_us
            .cmp(&a.total_us)
            .then_with(|| a.op_type.cmp(&b.op_type))
    });
    rows
}

/// The bytes of live values right after one node ran.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryPoint {
    pub node: EventNode,
    /// Nesting depth of the node (0: the main graph).
    pub depth: usize,
    pub live_bytes: usize,
}

/// Live bytes at each node as the run went: every value added (inputs,
/// initializers, intermediates, outputs; in subgraphs too) counts until it
/// is removed, and a replaced value counts at its new size. A point is
/// taken at each `run_node` event, when the node's inputs are still alive
/// and its outputs already are, which is where the peak lies.
pub fn memory_series(events: &[Event]) -> Vec<MemoryPoint> {
    let mut live: HashMap<(&str, &str), usize> = HashMap::new();
    let mut total: usize = 0;
    let mut out = Vec::new();
    for e in events {
        let key = (e.scope.as_str(), e.name.as_str());
        match e.action {
            EventAction::Add | EventAction::Replace => {
                let old = live.insert(key, e.bytes).unwrap_or(0);
                total = total - old + e.bytes;
            }
            EventAction::Remove => total -= live.remove(&key).unwrap_or(0),
            EventAction::RunNode => {
                if let Some(n) = &e.node {
                    out.push(MemoryPoint {
                        node: n.clone(),
                        depth: e.depth,
                        live_bytes: total,
                    });
                }
            }
        }
    }
    out
}

/// The index in `series` of its highest point (the first, on a tie).
pub fn peak(series: &[MemoryPoint]) -> Option<usize> {
    series
        .iter()
        .enumerate()
        .max_by(|(i, a), (j, b)| a.live_bytes.cmp(&b.live_bytes).then(j.cmp(i)))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::events::EventKind;

    fn value(action: EventAction, name: &str, bytes: usize) -> Event {
        let mut e = Event::bare(action, EventKind::Intermediate, name);
        e.bytes = bytes;
        e
    }

    fn node(i: usize, op: &str, us: u64, depth: usize) -> Event {
        let mut e = Event::bare(EventAction::RunNode, EventKind::Node, op);
        e.node = Some(EventNode {
            index: i,
            op_type: op.into(),
            domain: String::new(),
            name: format!("n{i}"),
        });
        e.elapsed_us = Some(us);
        e.depth = depth;
        e
    }

    #[test]
    fn memory_counts_adds_until_removed_and_finds_the_peak() {
        let ev = vec![
            value(EventAction::Add, "x", 100),
            value(EventAction::Add, "a", 400),
            node(0, "Relu", 1, 0),
            value(EventAction::Remove, "x", 0),
            value(EventAction::Add, "b", 50),
            node(1, "Neg", 1, 0),
            value(EventAction::Remove, "a", 0),
            value(EventAction::Replace, "b", 80),
            node(2, "Abs", 1, 0),
        ];
        let s = memory_series(&ev);
        let bytes: Vec<usize> = s.iter().map(|p| p.live_bytes).collect();
        assert_eq!(bytes, vec![500, 450, 80]);
        assert_eq!(peak(&s), Some(0));
    }

    #[test]
    fn time_shares_group_by_type_and_leave_body_nodes_inside_their_loop() {
        let ev = vec![
            node(0, "Conv", 60, 0),
            node(1, "Relu", 10, 0),
            node(2, "Conv", 20, 0),
            node(0, "Add", 5, 1),
            node(3, "Loop", 10, 0),
        ];
        let t = time_shares(&ev, false);
        assert_eq!(t[0].op_type, "Conv");
        assert_eq!((t[0].count, t[0].total_us), (2, 80));
        assert!((t[0].share - 0.8).abs() < 1e-12);
        assert!(t.iter().all(|r| r.op_type != "Add"));
        let n = time_shares(&ev, true);
        assert_eq!(n.len(), 4);
        assert_eq!(n[0].node.as_ref().map(|n| n.index), Some(0));
    }
}
