//! The error of a kernel builder or a running kernel.
//!
//! It belongs to the operator layer (kernel builders and the helpers that
//! give an operator its meaning return it); the runtime re-exports it.
//! Errors of the layers below (tensors, the memory budget, attribute
//! types) are kept as they are, as this error's `source`; the runtime
//! wraps a failing step's error in [`KernelError::Node`], naming the node.
//! Each variant displays exactly the message the shell prints.

use crate::ops::AttrTypeError;
use crate::tensor::budget::OverBudget;
use crate::tensor::TensorError;

/// Why a kernel could not be built or could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// What the operator found wrong with its inputs, attributes or
    /// subgraphs.
    #[error("{0}")]
    Invalid(String),
    /// A tensor that could not be built or converted.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// An allocation over the memory budget.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
    /// An attribute of the wrong type.
    #[error(transparent)]
    Attribute(#[from] AttrTypeError),
    /// A step of a plan failed: the node's label (`node 3 (Conv 'c1')`)
    /// and why.
    #[error("{node}: {source}")]
    Node {
        node: String,
        #[source]
        source: Box<KernelError>,
    },
}

impl KernelError {
    pub fn new(msg: impl Into<String>) -> Self {
        KernelError::Invalid(msg.into())
    }

    /// `self` as the failure of the node labelled `node`.
    pub fn at_node(self, node: impl Into<String>) -> Self {
        KernelError::Node {
            node: node.into(),
            source: Box::new(self),
        }
    }

    /// The innermost cause: below every node that wraps it.
    pub fn root(&self) -> &KernelError {
        match self {
            KernelError::Node { source, .. } => source.root(),
            other => other,
        }
    }
}

impl From<ndarray::ShapeError> for KernelError {
    fn from(e: ndarray::ShapeError) -> Self {
        KernelError::Invalid(e.to_string())
    }
}

/// `return Err(KernelError::new(format!(...)))` in one line.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::ops::KernelError::new(format!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn a_node_error_prints_label_then_cause_and_chains_to_it() {
        let inner = KernelError::new("input 0 must be float").at_node("node 1 (Relu 'r')");
        let outer = inner.clone().at_node("node 4 (Loop 'l')");
        assert_eq!(
            outer.to_string(),
            "node 4 (Loop 'l'): node 1 (Relu 'r'): input 0 must be float"
        );
        let src = outer.source().expect("a node error has a source");
        assert_eq!(src.to_string(), inner.to_string());
        assert_eq!(outer.root(), &KernelError::new("input 0 must be float"));
    }

    #[test]
    fn lower_layer_errors_keep_their_message_and_type() {
        let t = TensorError::new("shape [2] holds 2 values, got 3");
        let k = KernelError::from(t.clone());
        assert_eq!(k.to_string(), t.to_string());
        assert!(matches!(k, KernelError::Tensor(ref e) if *e == t));
    }
}
