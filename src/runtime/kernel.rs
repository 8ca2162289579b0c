//! The kernel interface: a builder turns a node (attributes decoded once, at
//! plan time) into a kernel; the kernel maps input values to output values.

use super::plan::Plan;
use crate::ops::Attrs;
use crate::proto::NodeProto;
use crate::tensor::{Tensor, TensorError, Value};
use std::fmt;
use std::sync::Arc;

/// Why a kernel could not be built or could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError(pub String);

impl KernelError {
    pub fn new(msg: impl Into<String>) -> Self {
        KernelError(msg.into())
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KernelError {}

impl From<TensorError> for KernelError {
    fn from(e: TensorError) -> Self {
        KernelError(e.0)
    }
}

impl From<crate::tensor::budget::OverBudget> for KernelError {
    fn from(e: crate::tensor::budget::OverBudget) -> Self {
        KernelError(e.to_string())
    }
}

impl From<crate::ops::AttrTypeError> for KernelError {
    fn from(e: crate::ops::AttrTypeError) -> Self {
        KernelError(e.to_string())
    }
}

impl From<ndarray::ShapeError> for KernelError {
    fn from(e: ndarray::ShapeError) -> Self {
        KernelError(e.to_string())
    }
}

/// `return Err(KernelError::new(format!(...)))` in one line.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::runtime::KernelError::new(format!($($arg)*)))
    };
}

/// What a kernel builder sees of its node.
pub struct NodeInfo<'a> {
    pub node: &'a NodeProto,
    pub opset: i64,
    pub attrs: Attrs<'a>,
    /// Compiles a graph attribute (If/Loop/Scan bodies) into a plan.
    pub(crate) compile: &'a dyn Fn(&crate::proto::GraphProto) -> Result<Arc<Plan>, KernelError>,
}

impl<'a> NodeInfo<'a> {
    /// The plan of a graph-valued attribute.
    pub fn subgraph(&self, name: &str) -> Result<Arc<Plan>, KernelError> {
        let g = self
            .attrs
            .graph(name)
            .ok_or_else(|| KernelError::new(format!("missing graph attribute '{name}'")))?;
        (self.compile)(g)
    }
}

/// A built kernel: inputs (absent optional inputs are `None`) to outputs.
pub type Kernel =
    Box<dyn Fn(&mut RunCtx, &[Option<&Value>]) -> Result<Vec<Value>, KernelError> + Send + Sync>;

/// Builds a kernel for one node.
pub type KernelBuilder = fn(&NodeInfo) -> Result<Kernel, KernelError>;

/// Runs a subgraph plan with named inputs; returns its outputs.
pub(crate) type SubgraphRunner<'a> =
    dyn FnMut(&Plan, Vec<(String, Value)>) -> Result<Vec<Value>, KernelError> + 'a;

/// What a running kernel can reach besides its inputs: subgraph execution
/// with the enclosing scopes' values.
pub struct RunCtx<'a> {
    pub(crate) runner: &'a mut SubgraphRunner<'a>,
}

impl RunCtx<'_> {
    /// Runs a subgraph with its formal inputs bound to `inputs` (in order);
    /// names it does not define are looked up in the enclosing scopes.
    pub fn run_subgraph(
        &mut self,
        plan: &Plan,
        inputs: Vec<Value>,
    ) -> Result<Vec<Value>, KernelError> {
        let named = plan
            .input_names()
            .iter()
            .cloned()
            .zip(inputs)
            .collect::<Vec<_>>();
        (self.runner)(plan, named)
    }
}

/// The `i`-th input as a tensor, or an error naming it.
pub fn tensor_in<'v>(inputs: &[Option<&'v Value>], i: usize) -> Result<&'v Tensor, KernelError> {
    match inputs.get(i).copied().flatten() {
        Some(Value::Tensor(t)) => Ok(t),
        Some(v) => Err(KernelError::new(format!(
            "input {i} must be a tensor, got {}",
            v.describe()
        ))),
        None => Err(KernelError::new(format!("input {i} is missing"))),
    }
}

/// The `i`-th input as a tensor when present.
pub fn opt_tensor_in<'v>(
    inputs: &[Option<&'v Value>],
    i: usize,
) -> Result<Option<&'v Tensor>, KernelError> {
    match inputs.get(i).copied().flatten() {
        Some(Value::Tensor(t)) => Ok(Some(t)),
        Some(v) => Err(KernelError::new(format!(
            "input {i} must be a tensor, got {}",
            v.describe()
        ))),
        None => Ok(None),
    }
}
