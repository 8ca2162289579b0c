//! How a node is named in messages.

use crate::proto::NodeProto;
use std::fmt;

/// A node as messages name it: `node 3 (Conv)`, or `node 3 (Conv 'conv1')`
/// when it has a name. `index` is its position in its graph as written.
#[derive(Clone, Copy, Debug)]
pub struct NodeLabel<'a> {
    pub index: usize,
    pub op_type: &'a str,
    pub name: &'a str,
}

impl<'a> NodeLabel<'a> {
    pub fn new(index: usize, op_type: &'a str, name: &'a str) -> NodeLabel<'a> {
        NodeLabel {
            index,
            op_type,
            name,
        }
    }

    /// The label of `node`, the `index`-th of its graph.
    pub fn of(index: usize, node: &'a NodeProto) -> NodeLabel<'a> {
        NodeLabel::new(index, node.op_type(), node.name())
    }

    /// The short form the executed plan lists: the node's name, or
    /// `#3 Conv` when it has none.
    pub fn short(&self) -> String {
        if self.name.is_empty() {
            format!("#{} {}", self.index, self.op_type)
        } else {
            self.name.to_string()
        }
    }
}

impl fmt::Display for NodeLabel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            write!(f, "node {} ({})", self.index, self.op_type)
        } else {
            write!(f, "node {} ({} '{}')", self.index, self.op_type, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_unnamed_nodes() {
        assert_eq!(NodeLabel::new(3, "Conv", "").to_string(), "node 3 (Conv)");
        assert_eq!(
            NodeLabel::new(3, "Conv", "c1").to_string(),
            "node 3 (Conv 'c1')"
        );
        assert_eq!(NodeLabel::new(3, "Conv", "").short(), "#3 Conv");
        assert_eq!(NodeLabel::new(3, "Conv", "c1").short(), "c1");
    }
}
