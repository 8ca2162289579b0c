//! The plan (built once per model) and the executor.

use super::events::{Event, EventAction, EventKind, EventNode};
use crate::graph::{implicit_inputs, LocalConst, NodeLabel, Opsets, Schedule};
use crate::ops::kernel::{Kernel, KernelError, NodeInfo, Part, RunCtx, Subgraph};
use crate::ops::{self, Attrs};
use crate::proto::{canonical_domain, GraphProto, ModelProto, NodeProto, TypeProto};
use crate::tensor::ValueMap;
use crate::tensor::{DataType, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// A model that cannot be planned, by cause; a node is named by its
/// [`NodeLabel`] and a kernel builder's refusal is the `source`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The nodes cannot be ordered: a cycle, or an input nothing defines.
    #[error("{0}")]
    Order(String),
    #[error("the model has no graph")]
    NoGraph,
    #[error("{node}: the model imports no opset for domain '{domain}'")]
    NoOpset { node: String, domain: String },
    /// No definition of the node's operator at the model's opset.
    #[error("{node}: {source}")]
    Unsupported {
        node: String,
        #[source]
        source: ops::Unsupported,
    },
    /// The operator's kernel builder refused the node (a bad or mistyped
    /// attribute, an unsupported form).
    #[error("{node}: {source}")]
    Kernel {
        node: String,
        #[source]
        source: KernelError,
    },
    /// An attribute of another type than the operator reads: the node is
    /// refused, whatever the builder made of it.
    #[error("{node}: {source}")]
    Attribute {
        node: String,
        op_type: String,
        #[source]
        source: crate::ops::AttrTypeError,
    },
    #[error("initializer '{name}': {source}")]
    Initializer {
        name: String,
        #[source]
        source: crate::tensor::TensorError,
    },
    #[error("sparse initializers are not supported by the runtime")]
    SparseInitializers,
    /// Model-local functions that call each other deeper than the limit.
    #[error("function '{function}' calls nest more than {limit} deep (recursion?)")]
    FunctionDepth { function: String, limit: usize },
}

/// A run that failed, by cause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("interrupted (Ctrl-C) before the run")]
    Interrupted,
    /// A given value does not fit the input's declared type or shape.
    #[error("input '{input}' {problem}")]
    Input { input: String, problem: String },
    #[error("'{name}' is not an input of the graph (inputs: {inputs})")]
    NotAnInput { name: String, inputs: String },
    /// A step failed (the message names the node).
    #[error(transparent)]
    Execution(#[from] KernelError),
    /// The run's machinery failed (a worker ended without a result).
    #[error("{0}")]
    Internal(String),
}

/// Called with each value as it becomes available: a given input or an
/// initializer (node `None`), or a node's output (the node's index in the
/// graph) before any release can free it; `depth` is 0 for the main graph
/// and grows inside subgraphs (Loop, If, Scan bodies).
pub type ValueObserver = Arc<dyn Fn(&str, &Value, Option<usize>, usize) + Send + Sync>;

/// Per-run switches.
#[derive(Clone)]
pub struct RunOptions {
    /// Record the event log.
    pub events: bool,
    /// Free each intermediate right after its last consumer.
    pub release: bool,
    /// Elements kept per event.
    pub max_values: usize,
    /// Sees every value written (`dump` with release on); a run with an
    /// observer does not use the constant cache, so it sees every node.
    pub on_value: Option<ValueObserver>,
    /// The debugger's hook (breakpoints, stepping, watches); `None` costs nothing.
    pub debug: Option<Arc<dyn super::debug::Hook>>,
    /// Keep the graph outputs in [`RunResult::held`] too (a copy of each);
    /// off, they are moved into [`RunResult::outputs`] only (`bench`, the
    /// conformance runner: a copy of a large output is time the run did
    /// not need).
    pub hold_outputs: bool,
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("events", &self.events)
            .field("release", &self.release)
            .field("max_values", &self.max_values)
            .field("on_value", &self.on_value.as_ref().map(|_| "observer"))
            .field("debug", &self.debug.as_ref().map(|_| "hook"))
            .field("hold_outputs", &self.hold_outputs)
            .finish()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            events: true,
            release: false,
            max_values: 8,
            on_value: None,
            debug: None,
            hold_outputs: true,
        }
    }
}

/// A planned node, in execution order (see [`Plan::nodes`]).
#[derive(Clone, Debug)]
pub struct PlannedNode {
    /// The node's index in the graph.
    pub index: usize,
    pub op_type: String,
    pub domain: String,
    pub name: String,
    /// Output names (`None` for an omitted output).
    pub outputs: Vec<Option<String>>,
}

/// What a run returns.
#[derive(Debug, Default)]
pub struct RunResult {
    /// Graph outputs, in graph order.
    pub outputs: Vec<(String, Value)>,
    /// Every value still held at the end (inputs, initializers, intermediates
    /// not released, outputs).
    pub held: ValueMap,
    pub events: Vec<Event>,
    /// Events not recorded because the log reached `config max-events`.
    pub dropped_events: usize,
    /// Why the run stopped early (the log and `held` are as they were then).
    pub failed: Option<String>,
}

struct Step {
    index: usize,
    op_type: String,
    domain: String,
    name: String,
    kernel: Kernel,
    inputs: Vec<Option<String>>,
    outputs: Vec<Option<String>>,
    /// Intermediates whose last consumer is this step.
    release: Vec<String>,
    /// The node has subgraphs (reads enclosing scopes implicitly).
    nested: bool,
    /// The operator's outputs are a function of its inputs (not a random
    /// draw): the step may be computed once or hoisted out of a Loop.
    deterministic: bool,
    /// The original nodes this step stands for (see `runtime::passes`).
    covers: Vec<String>,
    /// The operators it runs, in order (one unless fused).
    ops: Vec<String>,
}

/// A step list with its constant steps and their cache.
struct Steps {
    steps: Vec<Step>,
    /// Steps whose result depends only on initializers (deterministic ops,
    /// no subgraphs): computed once and reused by runs without events.
    const_step: Vec<bool>,
    /// Graph inputs with an initializer default that constant steps read;
    /// giving one of them disables the cache for that run.
    const_overridable: HashSet<String>,
    const_cache: std::sync::OnceLock<ValueMap>,
}

/// The main graph after the plan-time passes (`runtime::passes`): run
/// when nothing observes the run.
struct Rewritten {
    list: Steps,
    /// Tensors the passes made (rewritten weights), read like initializers.
    made: ValueMap,
    /// Per pass: its name and how many rewrites it made.
    counts: Vec<(&'static str, usize)>,
    /// Graph inputs whose initializer default a rewrite used: giving one
    /// runs the graph as written.
    overridable: HashSet<String>,
}

/// One step of the executed plan, as [`Plan::describe_steps`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanRow {
    /// Position in execution order.
    pub position: usize,
    /// The operators the step runs, in order: `Conv`, or `Conv+BatchNormalization+Relu`.
    pub op: String,
    /// The original nodes the step stands for (names, or `#index Op` when
    /// unnamed), including removed Identity/Dropout nodes it now reads through.
    pub covers: Vec<String>,
    pub outputs: Vec<String>,
}

impl Step {
    /// Where the debugger's hook sees this step.
    fn at<'a>(&'a self, position: usize, depth: usize, scope: &'a str) -> super::debug::At<'a> {
        super::debug::At {
            index: self.index,
            op_type: &self.op_type,
            domain: &self.domain,
            name: &self.name,
            depth,
            scope,
            position,
            inputs: &self.inputs,
            outputs: &self.outputs,
        }
    }
}

/// A graph's outputs (in order) and every value it still holds.
type Executed = (Vec<(String, Value)>, ValueMap);

/// A declared graph input.
#[derive(Clone, Debug)]
pub struct InputDecl {
    pub name: String,
    pub ty: Option<TypeProto>,
}

/// A graph compiled for execution.
pub struct Plan {
    inputs: Vec<InputDecl>,
    input_names: Vec<String>,
    /// Initializer names in file order (each value is stored once, in
    /// `init_values`).
    init_order: Vec<String>,
    /// The initializers by name (read in place, never copied per run).
    init_values: ValueMap,
    /// The graph as written: run when the run is observed.
    full: Steps,
    outputs: Vec<String>,
    /// The rewritten main graph, when a pass changed something.
    fast: Option<Rewritten>,
}

/// `kernel` with node-local constant inputs (see `graph::upgrade`) at
/// their slots, after the inputs the step passes. A scalar of the first
/// input's type is made of that type at each run (a scalar: no cost).
fn bind_local(kernel: Kernel, consts: &[(usize, LocalConst)]) -> Kernel {
    enum Bound {
        Ready(Box<Value>),
        OfInput0(f64),
    }
    let consts: Vec<(usize, Bound)> = consts
        .iter()
        .map(|(i, c)| {
            let b = match c {
                LocalConst::Ints(v) => {
                    Bound::Ready(Box::new(Value::Tensor(LocalConst::int_list(v))))
                }
                LocalConst::ScalarOfInput0(x) => Bound::OfInput0(*x),
            };
            (*i, b)
        })
        .collect();
    let width = consts.iter().map(|c| c.0 + 1).max().unwrap_or(0);
    Box::new(move |cx, ins| {
        // only scalars of the first input's type are made per run (none:
        // no allocation)
        let made: Vec<(usize, Value)> = consts
            .iter()
            .filter_map(|(i, b)| match b {
                Bound::Ready(_) => None,
                Bound::OfInput0(x) => Some(
                    crate::ops::kernel::tensor_in(ins, 0)
                        .and_then(|t| {
                            crate::ops::kernels::manip::tensor_from_f64(t.dtype(), &[], vec![*x])
                        })
                        .map(|t| (*i, Value::Tensor(t))),
                ),
            })
            .collect::<Result<_, KernelError>>()?;
        let mut all: Vec<Option<&Value>> = ins.to_vec();
        if all.len() < width {
            all.resize(width, None);
        }
        for (i, b) in &consts {
            if let Bound::Ready(v) = b {
                all[*i] = Some(v);
            }
        }
        for (i, v) in &made {
            all[*i] = Some(v);
        }
        kernel(cx, &all)
    })
}

/// Orders a node list, finds each intermediate's last reader, builds the
/// kernels (fused Conv kernels where `fusion` says) and marks the constant
/// steps. `init_names` are the names readable without a node (initializers,
/// and tensors the passes made).
fn build_steps(
    graph: &GraphProto,
    nodes: &[NodeProto],
    init_names: &HashSet<String>,
    outputs: &[String],
    opsets: &Opsets,
    nested: bool,
    fusion: Option<&super::passes::Rewritten>,
) -> Result<Steps, PlanError> {
    let available: HashSet<&str> = graph
        .input
        .iter()
        .map(|i| i.name())
        .chain(init_names.iter().map(|s| s.as_str()))
        .collect();
    let keep: HashSet<&str> = available
        .iter()
        .copied()
        .chain(outputs.iter().map(|s| s.as_str()))
        .collect();
    let Schedule {
        order,
        needs,
        mut release,
    } = Schedule::build(nodes, &available, &keep, nested)
        .map_err(|e| PlanError::Order(e.describe_nodes(nodes)))?;

    let mut steps = Vec::with_capacity(nodes.len());
    for (pos, &k) in order.iter().enumerate() {
        let n = &nodes[k];
        // the node's index in the graph as written
        let i = fusion.map_or(k, |f| f.origin.get(k).copied().unwrap_or(k));
        let domain = canonical_domain(n.domain());
        let opset = match opsets.get(domain) {
            Some(v) => v,
            None => {
                return Err(PlanError::NoOpset {
                    node: NodeLabel::of(i, n).to_string(),
                    domain: domain.to_string(),
                })
            }
        };
        let def =
            ops::resolve(domain, n.op_type(), opset).map_err(|source| PlanError::Unsupported {
                node: NodeLabel::of(i, n).to_string(),
                source,
            })?;
        let builder = def.kernel;
        let compile = |g: &GraphProto| -> Result<Arc<dyn Subgraph>, KernelError> {
            match Plan::for_graph(g, opsets, true) {
                Ok(p) => Ok(Arc::new(p)),
                Err(e) => Err(KernelError::new(e.to_string())),
            }
        };
        // the kernel is built for the node's newest form, its node-local
        // constants bound into it; the step keeps the inputs as written
        let upgraded = crate::graph::upgrade(n, opsets.default_domain());
        let un = upgraded.as_ref().map_or(n, |u| &u.node);
        let mistyped = std::cell::Cell::new(None);
        let info = NodeInfo {
            node: un,
            opset,
            attrs: Attrs::recording(un, &mistyped),
            compile: &compile,
        };
        let epilogue = fusion.and_then(|f| f.epilogue.get(k).cloned().flatten());
        let built = match epilogue {
            Some(e) => crate::ops::kernels::conv::conv_fused(&info, Some(e)),
            None => builder(&info),
        };
        // an attribute of another type than the operator reads refuses the
        // node, whatever the builder made of it
        if let Some(source) = mistyped.take() {
            return Err(PlanError::Attribute {
                node: NodeLabel::of(i, n).to_string(),
                op_type: n.op_type().to_string(),
                source,
            });
        }
        let kernel = built.map_err(|source| PlanError::Kernel {
            node: NodeLabel::of(i, n).to_string(),
            source,
        })?;
        let kernel = match upgraded {
            Some(u) if !u.consts.is_empty() => bind_local(kernel, &u.consts),
            _ => kernel,
        };
        let mut ins: Vec<Option<String>> = n
            .input
            .iter()
            .map(|s| (!s.is_empty()).then(|| s.clone()))
            .collect();
        while ins.last() == Some(&None) {
            ins.pop();
        }
        steps.push(Step {
            index: i,
            op_type: n.op_type().to_string(),
            domain: n.domain().to_string(),
            name: n.name().to_string(),
            kernel,
            inputs: ins,
            outputs: n
                .output
                .iter()
                .map(|s| (!s.is_empty()).then(|| s.clone()))
                .collect(),
            release: std::mem::take(&mut release[pos]),
            // it reads more than its explicit inputs: through subgraphs
            nested: needs[k].len() > n.input.iter().filter(|s| !s.is_empty()).count(),
            deterministic: def.deterministic,
            covers: fusion
                .and_then(|f| f.covers.get(k).cloned())
                .unwrap_or_else(|| vec![NodeLabel::of(i, n).short()]),
            ops: fusion
                .and_then(|f| f.fused_ops.get(k).cloned())
                .unwrap_or_else(|| vec![n.op_type().to_string()]),
        });
    }
    let input_set: HashSet<&str> = graph.input.iter().map(|i| i.name()).collect();
    let mut const_names: HashSet<String> = init_names.clone();
    let mut const_overridable = HashSet::new();
    let mut const_step = Vec::with_capacity(steps.len());
    for step in &steps {
        let ok = step.deterministic
            && !step.nested
            && step
                .inputs
                .iter()
                .flatten()
                .all(|n| const_names.contains(n));
        if ok {
            for n in step.inputs.iter().flatten() {
                if input_set.contains(n.as_str()) {
                    const_overridable.insert(n.clone());
                }
            }
            const_names.extend(step.outputs.iter().flatten().cloned());
        }
        const_step.push(ok);
    }
    Ok(Steps {
        steps,
        const_step,
        const_overridable,
        const_cache: std::sync::OnceLock::new(),
    })
}

impl Plan {
    /// Plans a model's main graph.
    pub fn new(model: &ModelProto) -> Result<Plan, PlanError> {
        let graph = model.graph.as_ref().ok_or(PlanError::NoGraph)?;
        let mut opsets = Opsets::from_imports(&model.opset_import);
        for f in &model.functions {
            opsets.import_missing(&f.opset_import);
        }
        match super::inline::expand_functions(model)? {
            Some(expanded) => Plan::for_graph(&expanded, &opsets, false),
            None => Plan::for_graph(graph, &opsets, false),
        }
    }

    fn for_graph(graph: &GraphProto, opsets: &Opsets, nested: bool) -> Result<Plan, PlanError> {
        let mut init_order = Vec::with_capacity(graph.initializer.len());
        let mut init_values =
            ValueMap::with_capacity_and_hasher(graph.initializer.len(), Default::default());
        let mut init_names = HashSet::new();
        for t in &graph.initializer {
            let v = crate::proto::from_proto(t).map_err(|source| PlanError::Initializer {
                name: t.name().to_string(),
                source,
            })?;
            init_names.insert(t.name().to_string());
            // a name given twice keeps its last value (as a lookup by name
            // always did), listed once
            if init_values
                .insert(t.name().to_string(), Value::Tensor(v))
                .is_none()
            {
                init_order.push(t.name().to_string());
            }
        }
        if !graph.sparse_initializer.is_empty() {
            return Err(PlanError::SparseInitializers);
        }
        let inputs: Vec<InputDecl> = graph
            .input
            .iter()
            .map(|vi| InputDecl {
                name: vi.name().to_string(),
                ty: vi.r#type.clone(),
            })
            .collect();
        let input_names = inputs.iter().map(|i| i.name.clone()).collect();
        let outputs: Vec<String> = graph.output.iter().map(|o| o.name().to_string()).collect();

        let full = build_steps(
            graph,
            &graph.node,
            &init_names,
            &outputs,
            opsets,
            nested,
            None,
        )?;
        let fast = if nested {
            None
        } else {
            let implicit: HashSet<String> = graph.node.iter().flat_map(implicit_inputs).collect();
            let opset = opsets.default_domain();
            super::passes::rewrite(graph, &init_values, implicit, opset).and_then(|rw| {
                let mut names = init_names.clone();
                names.extend(rw.made.keys().cloned());
                // a rewrite the kernels refuse leaves the graph as written
                let list =
                    build_steps(graph, &rw.nodes, &names, &outputs, opsets, false, Some(&rw))
                        .ok()?;
                Some(Rewritten {
                    list,
                    made: rw.made,
                    counts: rw.counts,
                    overridable: rw.overridable,
                })
            })
        };
        Ok(Plan {
            inputs,
            input_names,
            init_order,
            init_values,
            full,
            outputs,
            fast,
        })
    }

    /// The steps whose inputs stay the same across a Loop's iterations:
    /// `invariant` body inputs (carried values the body passes through
    /// unchanged), names from enclosing scopes, the body's initializers and
    /// the results of such steps; deterministic operators without subgraphs
    /// only. `None` when no step qualifies.
    /// The plan a kernel hands back as a [`Subgraph`] (every subgraph this
    /// runtime compiles is a plan).
    fn of_subgraph(sub: &dyn Subgraph) -> Result<&Plan, KernelError> {
        sub.as_any()
            .downcast_ref::<Plan>()
            .ok_or_else(|| KernelError::new("a subgraph compiled by another engine"))
    }

    pub(crate) fn hoisting(&self, invariant: &[String]) -> Option<crate::ops::kernel::Hoisting> {
        let produced: HashSet<&str> = self
            .full
            .steps
            .iter()
            .flat_map(|s| s.outputs.iter().flatten().map(|o| o.as_str()))
            .collect();
        // values of this scope that may change between iterations
        let mut variant: HashSet<&str> = self
            .input_names
            .iter()
            .map(|s| s.as_str())
            .filter(|n| !invariant.iter().any(|i| i == n) || produced.contains(n))
            .chain(produced.iter().copied())
            .collect();
        let mut hoist = crate::ops::kernel::Hoisting::default();
        for step in &self.full.steps {
            let ok = !step.nested
                && step.deterministic
                && step
                    .inputs
                    .iter()
                    .flatten()
                    .all(|n| !variant.contains(n.as_str()));
            if ok {
                for o in step.outputs.iter().flatten() {
                    variant.remove(o.as_str());
                    hoist.outputs.insert(o.clone());
                }
            }
            hoist.mask.push(ok);
        }
        (hoist.count() > 0).then_some(hoist)
    }

    /// Declared graph inputs (including those with an initializer default).
    pub fn inputs(&self) -> &[InputDecl] {
        &self.inputs
    }

    pub fn input_names(&self) -> &[String] {
        &self.input_names
    }

    pub fn output_names(&self) -> &[String] {
        &self.outputs
    }

    /// The nodes in the order the executor runs them.
    pub fn nodes(&self) -> Vec<PlannedNode> {
        self.full
            .steps
            .iter()
            .map(|s| PlannedNode {
                index: s.index,
                op_type: s.op_type.clone(),
                domain: s.domain.clone(),
                name: s.name.clone(),
                outputs: s.outputs.clone(),
            })
            .collect()
    }

    /// The bytes of the initializers this plan holds: `(mapped, owned)`,
    /// mapped ones being the loaded file's bytes used in place (counted
    /// once, shared with the model), owned ones copies on the heap (small
    /// or misaligned weights, typed fields, and tensors that had to be
    /// converted).
    pub fn weight_bytes(&self) -> (usize, usize) {
        let (mut mapped, mut owned) = (0, 0);
        for v in self.init_values.values() {
            if let Value::Tensor(t) = v {
                if t.is_mapped() {
                    mapped += t.bytes();
                } else {
                    owned += t.bytes();
                }
            }
        }
        (mapped, owned)
    }

    /// The steps an unobserved run executes (the rewritten plan when a
    /// plan-time pass changed the graph, else the graph as written), in
    /// order, each with the original nodes it covers.
    pub fn describe_steps(&self) -> Vec<PlanRow> {
        let list = self.fast.as_ref().map_or(&self.full, |f| &f.list);
        list.steps
            .iter()
            .enumerate()
            .map(|(position, s)| PlanRow {
                position,
                op: s.ops.join("+"),
                covers: s.covers.clone(),
                outputs: s.outputs.iter().flatten().cloned().collect(),
            })
            .collect()
    }

    /// [`Plan::describe_steps`] as text: a summary line, then one line per
    /// step (position, operators, covered nodes, outputs).
    pub fn describe_plan(&self) -> String {
        let (written, executed) = self.step_counts();
        let mut t = format!("executed plan: {executed} steps for {written} nodes");
        let counts = self.rewrites();
        if counts.is_empty() {
            t.push_str(" (no plan-time rewrite applies)\n");
        } else {
            let list: Vec<String> = counts.iter().map(|(n, c)| format!("{n} {c}")).collect();
            t.push_str(&format!(
                " ({}; {} new weight tensors); runs with events, the debugger or a value observer execute the graph as written\n",
                list.join(", "),
                self.made_tensors()
            ));
        }
        for r in self.describe_steps() {
            t.push_str(&format!(
                "{:>5}  {}  [{}] -> {}\n",
                r.position,
                r.op,
                r.covers.join(", "),
                r.outputs.join(", ")
            ));
        }
        t
    }

    /// Per plan-time pass: its name and how many rewrites it made (empty
    /// when no pass changed the graph).
    pub fn rewrites(&self) -> Vec<(&'static str, usize)> {
        self.fast
            .as_ref()
            .map(|f| f.counts.clone())
            .unwrap_or_default()
    }

    /// Steps in the graph as written, and in the plan an unobserved run
    /// executes.
    pub fn step_counts(&self) -> (usize, usize) {
        let fast = self.fast.as_ref().map_or(&self.full, |f| &f.list);
        (self.full.steps.len(), fast.steps.len())
    }

    /// Bytes of the tensors the plan-time passes made (weights and biases
    /// rewritten by a folded BatchNormalization): held besides the
    /// original weights, which runs that are observed still read.
    pub fn rewritten_weight_bytes(&self) -> usize {
        self.fast
            .as_ref()
            .map_or(0, |f| f.made.values().map(Value::bytes).sum())
    }

    /// How many tensors the passes made (rewritten weights and biases):
    /// the only copies of weight data the passes make.
    pub fn made_tensors(&self) -> usize {
        self.fast.as_ref().map_or(0, |f| f.made.len())
    }

    /// The graph's initializers, in file order.
    pub fn initializer_values(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.init_order
            .iter()
            .filter_map(|n| self.init_values.get_key_value(n))
    }

    /// Inputs the caller must give (those without an initializer).
    pub fn required_inputs(&self) -> Vec<&InputDecl> {
        self.inputs
            .iter()
            .filter(|i| !self.init_values.contains_key(&i.name))
            .collect()
    }

    /// Runs the graph on named inputs.
    pub fn run<S: std::hash::BuildHasher>(
        &self,
        inputs: HashMap<String, Value, S>,
        opts: &RunOptions,
    ) -> Result<RunResult, RunError> {
        match self.run_partial(inputs, opts) {
            (r, None) => Ok(r),
            (_, Some(e)) => Err(e),
        }
    }

    /// Runs the graph and returns what it got to: on a failure, the event
    /// log up to the failing node and the values held at that moment (no
    /// outputs), with the error.
    pub fn run_partial<S: std::hash::BuildHasher>(
        &self,
        inputs: HashMap<String, Value, S>,
        opts: &RunOptions,
    ) -> (RunResult, Option<RunError>) {
        // a Ctrl-C between runs (`bench`) stops even a plan whose every
        // step is cached
        if super::limits::interrupted() {
            let e = RunError::Interrupted;
            return (RunResult::default(), Some(e));
        }
        let mut events = Vec::new();
        let mut log = opts.events.then_some(&mut events);
        super::limits::take_dropped_events();
        let mut given: Vec<(String, Value)> = Vec::new();
        let mut inputs = inputs;
        let mut error = None;
        for decl in &self.inputs {
            if let Some(val) = inputs.remove(&decl.name) {
                if let Err(e) = check_input(decl, &val) {
                    error = Some(e);
                    break;
                }
                given.push((decl.name.clone(), val));
            }
        }
        if let Some(extra) = inputs.keys().next().filter(|_| error.is_none()) {
            error = Some(RunError::NotAnInput {
                name: extra.clone(),
                inputs: self.input_names.join(", "),
            });
        }
        if let Some(e) = error {
            return (RunResult::default(), Some(e));
        }
        let mut held =
            ValueMap::with_capacity_and_hasher(self.full.steps.len() * 2, Default::default());
        let result = self.exec_into(&mut held, given, &[], opts, &mut log, 0, "", None);
        let (outputs, error) = match result {
            Ok(outputs) => (outputs, None),
            Err(e) => (Vec::new(), Some(RunError::Execution(e))),
        };
        let r = RunResult {
            outputs,
            held,
            events,
            dropped_events: super::limits::take_dropped_events(),
            failed: error.as_ref().map(|e| e.to_string()),
        };
        (r, error)
    }

    #[allow(clippy::too_many_arguments)]
    fn exec(
        &self,
        given: Vec<(String, Value)>,
        outer: &[&ValueMap],
        opts: &RunOptions,
        log: &mut Option<&mut Vec<Event>>,
        depth: usize,
        scope: &str,
        part: Option<Part>,
    ) -> Result<Executed, KernelError> {
        let mut values =
            ValueMap::with_capacity_and_hasher(self.full.steps.len() * 2, Default::default());
        let outs = self.exec_into(&mut values, given, outer, opts, log, depth, scope, part)?;
        Ok((outs, values))
    }

    /// What the debugger sees of a scope: its values, the constant cache,
    /// the initializers and the enclosing scopes.
    fn view<'a>(
        &'a self,
        local: &'a ValueMap,
        cached: &'a ValueMap,
        outer: &'a [&'a ValueMap],
    ) -> super::debug::View<'a> {
        super::debug::View {
            local,
            cached,
            init: &self.init_values,
            outer,
        }
    }

    /// Runs the steps with `values` as the scope's value map (left as it
    /// was at a failure) and returns the graph outputs.
    #[allow(clippy::too_many_arguments)]
    fn exec_into(
        &self,
        values: &mut ValueMap,
        given: Vec<(String, Value)>,
        outer: &[&ValueMap],
        opts: &RunOptions,
        log: &mut Option<&mut Vec<Event>>,
        depth: usize,
        scope: &str,
        part: Option<Part>,
    ) -> Result<Vec<(String, Value)>, KernelError> {
        let max_events = super::limits::max_events();
        let push = |log: &mut Option<&mut Vec<Event>>, mut ev: Event| {
            if let Some(l) = log.as_mut() {
                if l.len() >= max_events {
                    super::limits::drop_event();
                    return;
                }
                ev.index = l.len();
                ev.depth = depth;
                ev.scope = scope.to_string();
                l.push(ev);
            }
        };
        for (name, v) in given {
            if log.is_some() {
                push(
                    log,
                    Event::for_value(
                        EventAction::Add,
                        EventKind::Input,
                        &name,
                        &v,
                        opts.max_values,
                    ),
                );
            }
            if let Some(f) = &opts.on_value {
                f(&name, &v, None, depth);
            }
            values.insert(name, v);
        }
        for decl in &self.inputs {
            // a subgraph input may have no value (an omitted Loop input)
            if depth == 0
                && !values.contains_key(&decl.name)
                && !self.init_values.contains_key(&decl.name)
            {
                return Err(KernelError::new(format!(
                    "input '{}' is not set",
                    decl.name
                )));
            }
        }
        for (name, v) in self.initializer_values() {
            if values.contains_key(name) {
                continue;
            }
            if let Some(f) = &opts.on_value {
                f(name, v, None, depth);
            }
            if log.is_some() {
                push(
                    log,
                    Event::for_value(
                        EventAction::Add,
                        EventKind::Initializer,
                        name,
                        v,
                        opts.max_values,
                    ),
                );
            }
        }
        // The rewritten plan runs only when nothing observes the run (see
        // `runtime::passes`): an observed run sees every original node, and
        // a run that keeps its intermediates (`held`) keeps all of them.
        let observed =
            log.is_some() || opts.debug.is_some() || opts.on_value.is_some() || !opts.release;
        let empty_made = ValueMap::default();
        let (list, made) = match &self.fast {
            Some(f)
                if depth == 0
                    && part.is_none()
                    && !observed
                    && !f.overridable.iter().any(|n| values.contains_key(n)) =>
            {
                (&f.list, &f.made)
            }
            _ => (&self.full, &empty_made),
        };
        // Constant steps: reuse their results when no event is recorded.
        let use_cache = depth == 0
            && log.is_none()
            && opts.release
            && opts.on_value.is_none()
            && list.const_step.iter().any(|&c| c)
            && !list
                .const_overridable
                .iter()
                .any(|n| values.contains_key(n));
        let cache = if use_cache {
            list.const_cache.get()
        } else {
            None
        };
        let mut building: Option<ValueMap> = (use_cache && cache.is_none()).then(ValueMap::default);
        let empty = ValueMap::default();
        let cached: &ValueMap = match part {
            Some(Part::Variant(_, pre)) => pre,
            _ => cache.unwrap_or(&empty),
        };
        let outputs_set: HashSet<&str> = self.outputs.iter().map(|s| s.as_str()).collect();
        for (si, step) in list.steps.iter().enumerate() {
            if cache.is_some() && list.const_step[si] {
                continue;
            }
            match part {
                Some(Part::Invariant(m)) if !m.get(si).copied().unwrap_or(false) => continue,
                Some(Part::Variant(m, _)) if m.get(si).copied().unwrap_or(false) => continue,
                _ => {}
            }
            if let Some(h) = &opts.debug {
                h.before(
                    &step.at(si, depth, scope),
                    &self.view(values, cached, outer),
                )
                .map_err(KernelError::new)?;
            }
            // with a debugger the hook takes a Ctrl-C (as a pause, at the
            // next step should it come after the hook's look): failing here
            // instead raced it (seen once on a loaded CI machine)
            if opts.debug.is_none() && super::limits::interrupted() {
                return Err(KernelError::new(format!(
                    "interrupted (Ctrl-C) before node {} ({})",
                    step.index, step.op_type
                )));
            }
            let started = log.as_ref().map(|_| Instant::now());
            let produced = {
                let mut args: Vec<Option<&Value>> = Vec::with_capacity(step.inputs.len());
                for name in &step.inputs {
                    match name {
                        None => args.push(None),
                        Some(n) => {
                            let v = values
                                .get(n)
                                .or_else(|| cached.get(n))
                                .or_else(|| self.init_values.get(n))
                                .or_else(|| made.get(n))
                                .or_else(|| outer.iter().rev().find_map(|m| m.get(n)));
                            match v {
                                Some(v) => args.push(Some(v)),
                                None => {
                                    return Err(KernelError::new(format!(
                                        "node {} ({}): input '{n}' has no value",
                                        step.index, step.op_type
                                    )))
                                }
                            }
                        }
                    }
                }
                let mut scopes: Vec<&ValueMap> = outer.to_vec();
                scopes.push(&self.init_values);
                scopes.push(cached);
                scopes.push(&*values);
                let child_scope = if step.name.is_empty() {
                    step.op_type.clone()
                } else {
                    step.name.clone()
                };
                let mut sub_events: Vec<Event> = Vec::new();
                let want_events = log.is_some();
                let mut runner = |sub: &dyn Subgraph,
                                  ins: Vec<(String, Value)>|
                 -> Result<Vec<Value>, KernelError> {
                    let plan = Plan::of_subgraph(sub)?;
                    let mut sub_log = want_events.then_some(&mut sub_events);
                    let (outs, _) = plan.exec(
                        ins,
                        &scopes,
                        opts,
                        &mut sub_log,
                        depth + 1,
                        &child_scope,
                        None,
                    )?;
                    Ok(outs.into_iter().map(|(_, v)| v).collect())
                };
                // partial runs skip steps: only when nothing observes them
                let quiet = !want_events && opts.debug.is_none() && opts.on_value.is_none();
                let mut parts = |sub: &dyn Subgraph,
                                 ins: Vec<(String, Value)>,
                                 part: Part|
                 -> Result<(Vec<Value>, ValueMap), KernelError> {
                    let plan = Plan::of_subgraph(sub)?;
                    let (outs, values) = plan.exec(
                        ins,
                        &scopes,
                        opts,
                        &mut None,
                        depth + 1,
                        &child_scope,
                        Some(part),
                    )?;
                    Ok((outs.into_iter().map(|(_, v)| v).collect(), values))
                };
                let mut cx = RunCtx {
                    runner: &mut runner,
                    parts: if quiet { Some(&mut parts) } else { None },
                };
                let out = (step.kernel)(&mut cx, &args).map_err(|e| {
                    let who = NodeLabel::new(step.index, &step.op_type, &step.name);
                    e.at_node(who.to_string())
                })?;
                if let Some(l) = log.as_mut() {
                    for mut ev in sub_events {
                        if l.len() >= max_events {
                            super::limits::drop_event();
                            continue;
                        }
                        ev.index = l.len();
                        l.push(ev);
                    }
                }
                out
            };
            let elapsed = started.map(|s| s.elapsed().as_micros() as u64);
            // the backstop for growth no single allocation check saw
            if let Some(over) = crate::tensor::budget::exceeded() {
                return Err(KernelError::new(format!(
                    "node {} ({}): the heap holds {}, over the memory budget of {} (`config max-memory` sets it)",
                    step.index,
                    step.op_type,
                    crate::tensor::budget::human(over.in_use),
                    crate::tensor::budget::human(over.limit)
                )));
            }
            if produced.len() < step.outputs.iter().filter(|o| o.is_some()).count() {
                return Err(KernelError::new(format!(
                    "node {} ({}) produced {} outputs, the graph expects {}",
                    step.index,
                    step.op_type,
                    produced.len(),
                    step.outputs.len()
                )));
            }
            for (name, v) in step.outputs.iter().zip(produced) {
                let Some(name) = name else { continue };
                if let Some(b) = building.as_mut().filter(|_| list.const_step[si]) {
                    b.insert(name.clone(), v.clone());
                }
                if log.is_some() {
                    let action = if values.contains_key(name) {
                        EventAction::Replace
                    } else {
                        EventAction::Add
                    };
                    let kind = if outputs_set.contains(name.as_str()) {
                        EventKind::Output
                    } else {
                        EventKind::Intermediate
                    };
                    push(
                        log,
                        Event::for_value(action, kind, name, &v, opts.max_values),
                    );
                }
                if let Some(f) = &opts.on_value {
                    f(name, &v, Some(step.index), depth);
                }
                values.insert(name.clone(), v);
            }
            if let Some(h) = &opts.debug {
                h.after(
                    &step.at(si, depth, scope),
                    &self.view(values, cached, outer),
                )
                .map_err(KernelError::new)?;
            }
            if log.is_some() {
                let mut ev = Event::bare(EventAction::RunNode, EventKind::Node, &step.name);
                ev.node = Some(EventNode {
                    index: step.index,
                    op_type: step.op_type.clone(),
                    domain: step.domain.clone(),
                    name: step.name.clone(),
                });
                ev.elapsed_us = elapsed;
                push(log, ev);
            }
            // a partial run of the hoisted steps keeps their results: the
            // other steps read them on every iteration
            if opts.release && !matches!(part, Some(Part::Invariant(_))) {
                for name in &step.release {
                    if values.remove(name).is_some() && log.is_some() {
                        push(
                            log,
                            Event::bare(EventAction::Remove, EventKind::Intermediate, name),
                        );
                    }
                }
            }
        }
        if let Some(Part::Invariant(_)) = part {
            return Ok(Vec::new());
        }
        let mut outs = Vec::with_capacity(self.outputs.len());
        for (oi, name) in self.outputs.iter().enumerate() {
            // a subgraph's scope ends here: move its outputs out (a name
            // listed twice is copied for all but its last use); the main
            // graph keeps its values for `held` unless told not to
            let moved = depth > 0 || !opts.hold_outputs;
            if moved && !self.outputs[oi + 1..].contains(name) {
                if let Some(v) = values.remove(name) {
                    outs.push((name.clone(), v));
                    continue;
                }
            }
            let v = values
                .get(name)
                .or_else(|| cached.get(name))
                .or_else(|| self.init_values.get(name))
                .or_else(|| made.get(name))
                .or_else(|| outer.iter().rev().find_map(|m| m.get(name)))
                .cloned()
                .ok_or_else(|| KernelError::new(format!("output '{name}' was not produced")))?;
            outs.push((name.clone(), v));
        }
        if let Some(b) = building {
            let _ = list.const_cache.set(b);
        }
        Ok(outs)
    }
}

/// Checks a given input against its declaration: kind, element type, rank
/// and fixed dimensions.
fn check_input(decl: &InputDecl, v: &Value) -> Result<(), RunError> {
    use crate::proto::type_proto::Value as TV;
    let Some(ty) = decl.ty.as_ref().and_then(|t| t.value.as_ref()) else {
        return Ok(());
    };
    let name = &decl.name;
    let bad = |input: &str, problem: String| RunError::Input {
        input: input.to_string(),
        problem,
    };
    match (ty, v) {
        (TV::TensorType(tt), Value::Tensor(t)) => {
            if let Some(want) = DataType::from_code(tt.elem_type()) {
                if want != DataType::Undefined && want != t.dtype() {
                    return Err(bad(name, format!("expects {want}, got {}", t.dtype())));
                }
            }
            if let Some(shape) = &tt.shape {
                if shape.dim.len() != t.rank() {
                    return Err(bad(
                        name,
                        format!(
                            "expects rank {} ({}), got shape {:?}",
                            shape.dim.len(),
                            crate::value_type::format_shape_proto(shape),
                            t.shape()
                        ),
                    ));
                }
                for (axis, (d, &got)) in shape.dim.iter().zip(t.shape()).enumerate() {
                    if let Some(crate::proto::tensor_shape_proto::dimension::Value::DimValue(w)) =
                        d.value
                    {
                        if w >= 0 && w as usize != got {
                            return Err(bad(
                                name,
                                format!(
                                    "axis {axis} must be {w}, got {got} (shape {:?})",
                                    t.shape()
                                ),
                            ));
                        }
                    }
                }
            }
            Ok(())
        }
        (TV::TensorType(_), other) => Err(bad(
            name,
            format!("expects a tensor, got {}", other.describe()),
        )),
        (TV::SequenceType(_), Value::Sequence { .. } | Value::MapSequence { .. }) => Ok(()),
        (TV::SequenceType(_), other) => Err(bad(
            name,
            format!("expects a sequence, got {}", other.describe()),
        )),
        (TV::OptionalType(_), _) => Ok(()),
        (TV::MapType(m), Value::Map(v)) => {
            let want = DataType::from_code(m.key_type()).unwrap_or(DataType::Undefined);
            // integer keys of any width are held as int64
            if want == DataType::String && v.key_type() != DataType::String
                || want != DataType::String && v.key_type() == DataType::String
            {
                return Err(bad(
                    name,
                    format!("expects map keys of type {want}, got {}", v.key_type()),
                ));
            }
            Ok(())
        }
        (TV::MapType(_), other) => Err(bad(
            name,
            format!("expects a map, got {}", other.describe()),
        )),
        _ => Ok(()),
    }
}

impl Subgraph for Plan {
    fn input_names(&self) -> &[String] {
        Plan::input_names(self)
    }

    fn hoisting(&self, invariant: &[String]) -> Option<crate::ops::kernel::Hoisting> {
        Plan::hoisting(self, invariant)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
