//! The event log of a run (SPEC §5): every value added, replaced or removed,
//! and every node run, in order.

use crate::tensor::{Scalar, Tensor, Value};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventAction {
    Add,
    Replace,
    Remove,
    RunNode,
}

impl EventAction {
    pub fn name(self) -> &'static str {
        match self {
            EventAction::Add => "add",
            EventAction::Replace => "replace",
            EventAction::Remove => "remove",
            EventAction::RunNode => "run_node",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        [
            EventAction::Add,
            EventAction::Replace,
            EventAction::Remove,
            EventAction::RunNode,
        ]
        .into_iter()
        .find(|a| a.name() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Input,
    Initializer,
    Intermediate,
    Output,
    Node,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Input => "input",
            EventKind::Initializer => "initializer",
            EventKind::Intermediate => "intermediate",
            EventKind::Output => "output",
            EventKind::Node => "node",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        [
            EventKind::Input,
            EventKind::Initializer,
            EventKind::Intermediate,
            EventKind::Output,
            EventKind::Node,
        ]
        .into_iter()
        .find(|a| a.name() == s)
    }
}

/// The node a `run_node` event is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventNode {
    pub index: usize,
    pub op_type: String,
    pub domain: String,
    pub name: String,
}

/// One entry of the log; the JSON field names are SPEC §5's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    pub index: usize,
    pub action: EventAction,
    pub kind: EventKind,
    pub name: String,
    pub data_type: i32,
    pub shape: Vec<usize>,
    pub value_count: usize,
    /// The first elements in their own type (exact integers, float32 as float32).
    pub values: Vec<Scalar>,
    pub string_values: Vec<String>,
    pub truncated: bool,
    pub node: Option<EventNode>,
    pub elapsed_us: Option<u64>,
    pub depth: usize,
    pub scope: String,
    /// Bytes the value takes in memory (add/replace events); not part of
    /// the SPEC's JSON, used by `memory`.
    #[serde(skip)]
    pub bytes: usize,
}

impl Event {
    /// An add/replace event for a value, keeping its first `max_values` elements.
    pub fn for_value(
        action: EventAction,
        kind: EventKind,
        name: &str,
        value: &Value,
        max_values: usize,
    ) -> Event {
        let mut ev = Event::bare(action, kind, name);
        let t: Option<&Tensor> = match value {
            Value::Tensor(t) => Some(t),
            Value::Optional(Some(v)) => v.as_tensor(),
            _ => None,
        };
        ev.data_type = value.dtype().code();
        ev.bytes = value.bytes();
        if let Some(t) = t {
            ev.shape = t.shape().to_vec();
            ev.value_count = t.len();
            match t {
                Tensor::Str(a) => {
                    ev.string_values = a.iter().take(max_values).cloned().collect();
                }
                _ => ev.values = t.head_scalars(max_values).unwrap_or_default(),
            }
            ev.truncated = ev.value_count > max_values;
        } else if let Value::Sequence { items, .. } = value {
            ev.shape = vec![items.len()];
            ev.value_count = items.len();
        } else if let Value::MapSequence { items, .. } = value {
            ev.shape = vec![items.len()];
            ev.value_count = items.len();
        } else if let Value::Map(m) = value {
            // a map's event carries its values, in key order
            ev.shape = vec![m.len()];
            ev.value_count = m.len();
            match m.values() {
                Tensor::Str(a) => {
                    ev.string_values = a.iter().take(max_values).cloned().collect();
                }
                t => ev.values = t.head_scalars(max_values).unwrap_or_default(),
            }
            ev.truncated = ev.value_count > max_values;
        }
        ev
    }

    /// An event with no data (remove, run_node).
    pub fn bare(action: EventAction, kind: EventKind, name: &str) -> Event {
        Event {
            index: 0,
            action,
            kind,
            name: name.to_string(),
            data_type: 0,
            shape: vec![],
            value_count: 0,
            values: vec![],
            string_values: vec![],
            truncated: false,
            node: None,
            elapsed_us: None,
            depth: 0,
            scope: String::new(),
            bytes: 0,
        }
    }
}
