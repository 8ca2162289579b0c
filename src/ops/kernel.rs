//! The kernel interface: a builder turns a node (attributes decoded once, at
//! plan time) into a kernel; the kernel maps input values to output values.
//!
//! Kernels do not know the engine that runs them: a graph attribute (If,
//! Loop, Scan bodies) is compiled by the engine into a [`Subgraph`], which a
//! running kernel hands back to the engine through [`RunCtx`]. The runtime's
//! `Plan` is that subgraph; tests may supply their own.

use crate::ops::Attrs;
pub use crate::ops::KernelError;
use crate::proto::NodeProto;
use crate::tensor::ValueMap;
use crate::tensor::{Tensor, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// What a kernel builder sees of its node.
pub struct NodeInfo<'a> {
    pub node: &'a NodeProto,
    pub opset: i64,
    pub attrs: Attrs<'a>,
    /// Compiles a graph attribute (If/Loop/Scan bodies) into a subgraph.
    pub(crate) compile: &'a Compile<'a>,
}

/// Compiles a graph attribute into a [`Subgraph`] of the running engine.
pub(crate) type Compile<'a> =
    dyn Fn(&crate::proto::GraphProto) -> Result<Arc<dyn Subgraph>, KernelError> + 'a;

/// A graph attribute compiled by the engine that runs the kernel; a kernel
/// only reads its formal inputs and asks which steps it may hoist, and runs
/// it through [`RunCtx`].
pub trait Subgraph: Send + Sync {
    /// The names of the subgraph's formal inputs, in order.
    fn input_names(&self) -> &[String];
    /// The steps that depend only on `invariant` inputs, enclosing scopes
    /// and constants (`None` when there are none).
    fn hoisting(&self, invariant: &[String]) -> Option<Hoisting>;
    /// The engine's own type, for the engine to get back.
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<'a> NodeInfo<'a> {
    /// The compiled subgraph of a graph-valued attribute.
    pub fn subgraph(&self, name: &str) -> Result<Arc<dyn Subgraph>, KernelError> {
        let g = self
            .attrs
            .graph(name)
            .ok_or_else(|| KernelError::new(format!("missing graph attribute '{name}'")))?;
        (self.compile)(g)
    }
}

/// The steps of a subgraph that depend only on values fixed for a whole
/// Loop (see `Plan::hoisting`): computed once before the first iteration.
#[derive(Clone, Debug, Default)]
pub struct Hoisting {
    /// Per step (execution order): computed once.
    pub mask: Vec<bool>,
    /// The names those steps produce.
    pub outputs: HashSet<String>,
}

impl Hoisting {
    /// How many steps are hoisted.
    pub fn count(&self) -> usize {
        self.mask.iter().filter(|&&m| m).count()
    }
}

/// A built kernel: inputs (absent optional inputs are `None`) to outputs.
pub type Kernel =
    Box<dyn Fn(&mut RunCtx, &[Option<&Value>]) -> Result<Vec<Value>, KernelError> + Send + Sync>;

/// Builds a kernel for one node.
pub type KernelBuilder = fn(&NodeInfo) -> Result<Kernel, KernelError>;

/// Runs a subgraph with named inputs; returns its outputs.
pub(crate) type SubgraphRunner<'a> =
    dyn FnMut(&dyn Subgraph, Vec<(String, Value)>) -> Result<Vec<Value>, KernelError> + 'a;

/// Which steps a partial run of a subgraph executes (loop-invariant
/// hoisting, see [`Subgraph::hoisting`]).
#[derive(Clone, Copy)]
pub(crate) enum Part<'a> {
    /// Only the hoisted steps; no outputs are collected.
    Invariant(&'a [bool]),
    /// Every other step, the hoisted results read from the map.
    Variant(&'a [bool], &'a ValueMap),
}

/// Runs part of a subgraph (loop-invariant hoisting); returns the
/// scope's outputs and the values it holds at the end.
pub(crate) type PartRunner<'a> = dyn FnMut(
        &dyn Subgraph,
        Vec<(String, Value)>,
        Part<'_>,
    ) -> Result<(Vec<Value>, ValueMap), KernelError>
    + 'a;

/// What a running kernel can reach besides its inputs: subgraph execution
/// with the enclosing scopes' values.
pub struct RunCtx<'a> {
    pub(crate) runner: &'a mut SubgraphRunner<'a>,
    /// Partial subgraph runs, offered only when nothing observes the run
    /// (no events, no debugger, no value observer): a hoisted step is then
    /// not reported once per iteration.
    pub(crate) parts: Option<&'a mut PartRunner<'a>>,
}

impl RunCtx<'_> {
    /// Runs a subgraph with its formal inputs bound to `inputs` (in order);
    /// names it does not define are looked up in the enclosing scopes.
    pub fn run_subgraph(
        &mut self,
        plan: &Arc<dyn Subgraph>,
        inputs: Vec<Value>,
    ) -> Result<Vec<Value>, KernelError> {
        let named = plan
            .input_names()
            .iter()
            .cloned()
            .zip(inputs)
            .collect::<Vec<_>>();
        (self.runner)(&**plan, named)
    }

    /// Whether this run may compute a subgraph's loop-invariant steps once
    /// (see [`RunCtx::run_invariant`]).
    pub fn can_hoist(&self) -> bool {
        self.parts.is_some()
    }

    /// Runs only the steps of `hoist` with the subgraph's inputs `inputs`
    /// (the invariant ones, by name) and returns the values they produce.
    pub fn run_invariant(
        &mut self,
        plan: &Arc<dyn Subgraph>,
        inputs: Vec<(String, Value)>,
        hoist: &Hoisting,
    ) -> Result<ValueMap, KernelError> {
        let Some(parts) = self.parts.as_mut() else {
            return Err(KernelError::new(
                "hoisting is not available in an observed run",
            ));
        };
        let (_, mut values) = parts(&**plan, inputs, Part::Invariant(&hoist.mask))?;
        values.retain(|k, _| hoist.outputs.contains(k));
        Ok(values)
    }

    /// Runs the steps not in `hoist`, reading the hoisted ones from `pre`
    /// (from [`RunCtx::run_invariant`]); like [`RunCtx::run_subgraph`].
    pub fn run_variant(
        &mut self,
        plan: &Arc<dyn Subgraph>,
        inputs: Vec<Value>,
        hoist: &Hoisting,
        pre: &ValueMap,
    ) -> Result<Vec<Value>, KernelError> {
        let Some(parts) = self.parts.as_mut() else {
            return Err(KernelError::new(
                "hoisting is not available in an observed run",
            ));
        };
        let named = plan
            .input_names()
            .iter()
            .cloned()
            .zip(inputs)
            .collect::<Vec<_>>();
        let (outs, _) = parts(&**plan, named, Part::Variant(&hoist.mask, pre))?;
        Ok(outs)
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
