//! The inference engine: walks graphs (and subgraphs) in order, applies the
//! rules, merges inferred types with declared ones, and writes value_info.

use crate::expr::{Bindings, Expr};
use crate::graph::{NodeLabel, Opsets, Schedule};
use crate::ops::ShapeRule;
use crate::ops::{self, Attrs};
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::proto::{
    canonical_domain, FunctionProto, GraphProto, ModelProto, NodeProto, ValueInfoProto,
};
use crate::tensor::DataType;
use crate::value_type::{Dim, TypeInfo};
use serde::Serialize;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// Where a value's type comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Declared,
    Inferred,
    Both,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Declared => "declared",
            Source::Inferred => "inferred",
            Source::Both => "both",
        }
    }
}

/// One value of the graph (or of a subgraph, with `scope`).
#[derive(Clone, Debug)]
pub struct ValueReport {
    pub name: String,
    /// `""` for the main graph, else the parent node and attribute.
    pub scope: String,
    /// The type to show: declared symbols are kept (`M`), with equations.
    pub ty: TypeInfo,
    pub source: Source,
}

/// A declared symbol tied to an inferred expression (`M = 2*N`).
#[derive(Clone, Debug, PartialEq)]
pub struct Equation {
    pub symbol: String,
    pub expr: Expr,
}

/// The result of inference.
#[derive(Clone, Debug, Default)]
pub struct InferReport {
    pub values: Vec<ValueReport>,
    pub equations: Vec<Equation>,
    pub warnings: Vec<String>,
}

impl InferReport {
    /// The report of a top-level value.
    pub fn get(&self, name: &str) -> Option<&ValueReport> {
        self.values
            .iter()
            .find(|v| v.name == name && v.scope.is_empty())
    }

    /// Top-level values by name, for many lookups (`get` scans).
    pub fn index(&self) -> HashMap<&str, &ValueReport> {
        let mut m = HashMap::with_capacity(self.values.len());
        for v in self.values.iter().filter(|v| v.scope.is_empty()) {
            m.entry(v.name.as_str()).or_insert(v);
        }
        m
    }

    /// Bindings extended with every equation whose right side they resolve.
    ///
    /// Each equation is tried once, when its last unbound symbol gets a
    /// value (in file order among those ready), so the cost is linear in
    /// the equations' size rather than one pass per newly bound symbol.
    pub fn extend_bindings(&self, b: &Bindings) -> Bindings {
        let mut out = b.clone();
        let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
        let mut missing = vec![0usize; self.equations.len()];
        let mut ready = BTreeSet::new();
        for (i, eq) in self.equations.iter().enumerate() {
            for sym in eq.expr.symbols() {
                if !out.contains_key(&sym) {
                    missing[i] += 1;
                    waiting.entry(sym).or_default().push(i);
                }
            }
            if missing[i] == 0 {
                ready.insert(i);
            }
        }
        while let Some(i) = ready.pop_first() {
            let eq = &self.equations[i];
            if out.contains_key(&eq.symbol) {
                continue;
            }
            if let Ok(v) = eq.expr.eval(&out) {
                out.insert(eq.symbol.clone(), v);
                for j in waiting.remove(&eq.symbol).unwrap_or_default() {
                    missing[j] -= 1;
                    if missing[j] == 0 {
                        ready.insert(j);
                    }
                }
            }
        }
        out
    }

    /// A shape's dimensions evaluated with bindings already extended by
    /// [`InferReport::extend_bindings`].
    pub fn resolve_extended(dims: &[Dim], extended: &Bindings) -> Vec<Option<i64>> {
        dims.iter()
            .map(|d| d.as_ref().and_then(|e| e.eval(extended).ok()))
            .collect()
    }

    /// A shape's dimensions evaluated with the bindings (and equations).
    pub fn resolve(&self, dims: &[Dim], b: &Bindings) -> Vec<Option<i64>> {
        Self::resolve_extended(dims, &self.extend_bindings(b))
    }
}

#[derive(Clone)]
struct Known {
    ty: TypeInfo,
    value: Option<SymValue>,
}

/// The values a graph sees: its own, then those of the graphs enclosing it,
/// looked up through the chain (never copied, so subgraphs cost their own
/// size only).
struct Scope<'p> {
    vars: HashMap<String, Known>,
    parent: Option<&'p Scope<'p>>,
}

impl Scope<'_> {
    fn get(&self, name: &str) -> Option<&Known> {
        let mut s = self;
        loop {
            if let Some(k) = s.vars.get(name) {
                return Some(k);
            }
            s = s.parent?;
        }
    }
}

/// A model-local function: (domain, name, overload).
type FnKey = (String, String, String);

/// How deep function calls may nest (recursion guard).
const MAX_FUNCTION_DEPTH: usize = 16;

struct Engine {
    opsets: Rc<Opsets>,
    functions: Rc<HashMap<FnKey, FunctionProto>>,
    /// Function-call depth of this engine.
    depth: usize,
    /// Shared by every engine of one inference, so fresh symbols are unique.
    fresh: Rc<Cell<usize>>,
    report: InferReport,
    equations: BTreeMap<String, Expr>,
    /// Rules looked up so far, by (domain, op type).
    rules: HashMap<(String, String), Result<ShapeRule, ops::Unsupported>>,
}

fn sym_value_of(t: &crate::proto::TensorProto) -> Option<SymValue> {
    // dims come from the file: checked, as a product may overflow
    let n = t
        .dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })?;
    // checked before decoding: a large initializer is never read here
    if n as usize > SymValue::MAX_TRACKED {
        return None;
    }
    SymValue::of_tensor(&crate::proto::from_proto(t).ok()?)
}

/// The order the nodes of `g` are inferred in: topological (the order the
/// plan runs them in), or as written when the graph has no such order (a
/// cycle: the nodes on it then see unknown inputs).
fn node_order(g: &GraphProto) -> Vec<usize> {
    let available: HashSet<&str> = g
        .input
        .iter()
        .map(|i| i.name())
        .chain(g.initializer.iter().map(|t| t.name()))
        .collect();
    match Schedule::build(&g.node, &available, &HashSet::new(), true) {
        Ok(s) => s.order,
        Err(_) => (0..g.node.len()).collect(),
    }
}

/// Infers every value of a model, writes the inferred types of node outputs
/// to `graph.value_info`, and returns the report.
pub fn infer_model(model: &mut ModelProto) -> InferReport {
    let opsets = Opsets::from_imports(&model.opset_import);
    let functions = model
        .functions
        .iter()
        .map(|f| {
            (
                (
                    canonical_domain(f.domain()).to_string(),
                    f.name().to_string(),
                    f.overload().to_string(),
                ),
                f.clone(),
            )
        })
        .collect();
    let mut engine = Engine {
        opsets: Rc::new(opsets),
        functions: Rc::new(functions),
        depth: 0,
        fresh: Rc::new(Cell::new(0)),
        report: InferReport::default(),
        equations: BTreeMap::new(),
        rules: HashMap::new(),
    };
    let Some(graph) = model.graph.as_mut() else {
        engine.report.warnings.push("the model has no graph".into());
        return engine.report;
    };
    let (_, written) = engine.graph(graph, None, None, "");
    // value_info: replace entries for the values we inferred
    let names: BTreeSet<&str> = written.iter().map(|v| v.name()).collect();
    graph.value_info.retain(|v| !names.contains(v.name()));
    graph.value_info.extend(written);
    engine.report.equations = engine
        .equations
        .into_iter()
        .map(|(symbol, expr)| Equation { symbol, expr })
        .collect();
    engine.report
}

/// Which side a merged dimension came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Won {
    /// Both are unknown.
    Neither,
    /// Both are known and agree.
    Agreed,
    /// Inference replaced a declaration it disagrees with (or cannot
    /// compare with).
    Overrode,
    Declared,
    Inferred,
}

/// Whether a declared and an inferred dimension are equal: `Some(true)`
/// when provably so, `Some(false)` when they differ for some size of
/// their symbols (tried on a fixed set of sizes), `None` when neither
/// could be shown (every trial failed to evaluate).
fn dims_agree(de: &Expr, ie: &Expr) -> Option<bool> {
    match de.equals(ie) {
        Some(v) => return Some(v),
        None if de.as_int().is_some() => return None,
        None => {}
    }
    const SIZES: [i64; 12] = [1, 2, 3, 4, 5, 7, 8, 13, 31, 64, 224, 1001];
    let mut syms: Vec<String> = de.symbols().into_iter().collect();
    syms.extend(ie.symbols());
    syms.sort();
    syms.dedup();
    let mut evaluated = false;
    for trial in 0..SIZES.len() {
        let b: crate::expr::Bindings = syms
            .iter()
            .enumerate()
            .map(|(k, s)| (s.clone(), SIZES[(trial + 5 * k) % SIZES.len()]))
            .collect();
        if let (Ok(a), Ok(c)) = (de.eval(&b), ie.eval(&b)) {
            if a != c {
                return Some(false);
            }
            evaluated = true;
        }
    }
    evaluated.then_some(true)
}

/// A fresh symbol made by a rule for a data-dependent size (`_NonZero3`).
fn is_fresh(e: &Expr) -> bool {
    let s = e.symbols();
    s.len() == 1 && s.iter().all(|n| n.starts_with('_')) && e.to_string().starts_with('_')
}

fn symbols_of(ty: &TypeInfo, out: &mut BTreeSet<String>) {
    if let Some(s) = ty.shape() {
        for e in s.iter().flatten() {
            out.extend(e.symbols());
        }
    }
}

/// A function body node with its attribute references (`@name`) bound to
/// the calling node's attributes, else to the function's defaults; a
/// reference to neither is dropped. Formal inputs the call leaves out
/// become absent (`""`).
fn bind_node(
    n: &NodeProto,
    call: &NodeProto,
    f: &FunctionProto,
    absent: &BTreeSet<&str>,
) -> NodeProto {
    let mut n = n.clone();
    n.attribute = n
        .attribute
        .iter()
        .filter_map(|a| {
            let Some(r) = a.ref_attr_name.as_deref() else {
                return Some(a.clone());
            };
            let src = call
                .attribute
                .iter()
                .find(|c| c.name() == r)
                .or_else(|| f.attribute_proto.iter().find(|c| c.name() == r))?;
            let mut b = src.clone();
            b.name = a.name.clone();
            Some(b)
        })
        .collect();
    if !absent.is_empty() {
        for i in n.input.iter_mut() {
            if absent.contains(i.as_str()) {
                i.clear();
            }
        }
    }
    n
}

impl Engine {
    /// The shape rule of an operator, cached by (domain, op type).
    fn rule(
        &mut self,
        domain: &str,
        op_type: &str,
        opset: i64,
    ) -> Result<ShapeRule, ops::Unsupported> {
        if let Some(r) = self.rules.get(&(domain.to_string(), op_type.to_string())) {
            return r.clone();
        }
        let r = ops::resolve(domain, op_type, opset).map(|d| d.shape);
        self.rules
            .insert((domain.to_string(), op_type.to_string()), r.clone());
        r
    }

    /// Infers a call of a model-local function through its body: formal
    /// inputs take the actual types and values. Returns the output types
    /// and values, and the body's warnings.
    #[allow(clippy::type_complexity)]
    fn call_function(
        &mut self,
        f: &FunctionProto,
        call: &NodeProto,
        inputs: &[Option<TypeInfo>],
        values: &[Option<SymValue>],
    ) -> (Vec<Option<TypeInfo>>, Vec<Option<SymValue>>, Vec<String>) {
        let name = format!("{}.{}", f.domain(), f.name());
        if self.depth >= MAX_FUNCTION_DEPTH {
            let w = format!("function '{name}' nests deeper than {MAX_FUNCTION_DEPTH} calls");
            return (vec![], vec![], vec![w]);
        }
        let mut opsets = (*self.opsets).clone();
        opsets.import(&f.opset_import);
        let absent: BTreeSet<&str> = f
            .input
            .iter()
            .enumerate()
            .filter(|(i, _)| call.input.get(*i).is_none_or(|s| s.is_empty()))
            .map(|(_, n)| n.as_str())
            .collect();
        let vi = |n: &String| ValueInfoProto {
            name: Some(n.clone()),
            ..Default::default()
        };
        let body = GraphProto {
            name: f.name.clone(),
            node: f
                .node
                .iter()
                .map(|n| bind_node(n, call, f, &absent))
                .collect(),
            input: f.input.iter().map(vi).collect(),
            output: f.output.iter().map(vi).collect(),
            value_info: f.value_info.clone(),
            ..Default::default()
        };
        let given = (0..f.input.len())
            .map(|i| {
                inputs.get(i).cloned().flatten().map(|ty| Known {
                    ty,
                    value: values.get(i).cloned().flatten(),
                })
            })
            .collect();
        let mut child = Engine {
            opsets: Rc::new(opsets),
            functions: self.functions.clone(),
            depth: self.depth + 1,
            fresh: self.fresh.clone(),
            report: InferReport::default(),
            // the body's declared symbols are its own
            equations: BTreeMap::new(),
            rules: HashMap::new(),
        };
        let (outs, _) = child.graph(&body, Some(given), None, &name);
        let warnings = child
            .report
            .warnings
            .into_iter()
            .map(|w| format!("in function '{name}': {w}"))
            .collect();
        let (tys, vals) = outs
            .into_iter()
            .map(|k| match k {
                Some(k) => (Some(k.ty), k.value),
                None => (None, None),
            })
            .unzip();
        (tys, vals, warnings)
    }

    /// Infers one graph. `given` overrides the declared input types
    /// (subgraphs, function bodies); `outer` is what the enclosing graphs
    /// define. Returns the outputs and the value_info to write.
    fn graph(
        &mut self,
        g: &GraphProto,
        given: Option<Vec<Option<Known>>>,
        outer: Option<&Scope>,
        scope: &str,
    ) -> (Vec<Option<Known>>, Vec<ValueInfoProto>) {
        let mut env = Scope {
            vars: HashMap::with_capacity(g.input.len() + g.initializer.len() + g.node.len()),
            parent: outer,
        };
        let mut input_syms = BTreeSet::new();
        let declared: HashMap<&str, TypeInfo> = g
            .value_info
            .iter()
            .chain(g.output.iter())
            .filter_map(|v| {
                v.r#type
                    .as_ref()
                    .map(|t| (v.name(), TypeInfo::from_proto(t)))
            })
            .collect();
        // the main graph's unknown input dims become fresh symbols; a
        // subgraph's inputs are given by its caller or stay as declared
        let top_level = given.is_none() && outer.is_none() && self.depth == 0;
        let fresh_inputs = if top_level {
            crate::value_type::input_types_with_fresh_dims(g)
        } else {
            Vec::new()
        };
        for (i, vi) in g.input.iter().enumerate() {
            let decl = match fresh_inputs.get(i) {
                Some(t) => t.clone(),
                None => vi.r#type.as_ref().map(TypeInfo::from_proto),
            };
            let given_k = given.as_ref().and_then(|gv| gv.get(i).cloned().flatten());
            let value = given_k.as_ref().and_then(|k| k.value.clone());
            let ty = given_k
                .map(|k| k.ty)
                .or(decl.clone())
                .unwrap_or(TypeInfo::Unknown);
            symbols_of(&ty, &mut input_syms);
            self.report.values.push(ValueReport {
                name: vi.name().to_string(),
                scope: scope.to_string(),
                ty: ty.clone(),
                source: if given.is_some() && decl.is_none() {
                    Source::Inferred
                } else {
                    Source::Declared
                },
            });
            env.vars.insert(vi.name().to_string(), Known { ty, value });
        }
        for t in &g.initializer {
            let elem = DataType::from_code(t.data_type()).unwrap_or(DataType::Undefined);
            let ty = TypeInfo::fixed(elem, &t.dims);
            if !g.input.iter().any(|i| i.name() == t.name()) {
                self.report.values.push(ValueReport {
                    name: t.name().to_string(),
                    scope: scope.to_string(),
                    ty: ty.clone(),
                    source: Source::Declared,
                });
            }
            env.vars.insert(
                t.name().to_string(),
                Known {
                    ty,
                    value: sym_value_of(t),
                },
            );
        }
        let mut written = Vec::new();
        let outputs: BTreeSet<&str> = g.output.iter().map(|o| o.name()).collect();
        for idx in node_order(g) {
            let node = &g.node[idx];
            let who = NodeLabel::of(idx, node).to_string();
            let who = if scope.is_empty() {
                who
            } else {
                format!("{scope}: {who}")
            };
            // the rule sees the node in its operator's newest form, its
            // node-local constants as known inputs (never in `env`)
            let upgraded = crate::graph::upgrade(node, self.opsets.default_domain());
            let node = upgraded.as_ref().map_or(node, |u| &u.node);
            let local = |n: &str| {
                upgraded.as_ref().and_then(|u| {
                    let i = node.input.iter().position(|s| s == n)?;
                    u.consts.iter().find(|c| c.0 == i).map(|c| &c.1)
                })
            };
            let first = node
                .input
                .first()
                .and_then(|n| env.get(n))
                .and_then(|k| k.ty.elem());
            let inputs: Vec<Option<TypeInfo>> = node
                .input
                .iter()
                .map(|n| {
                    if n.is_empty() {
                        None
                    } else if let Some(c) = local(n) {
                        match c.fixed_tensor() {
                            Some(t) => Some(TypeInfo::fixed(t.dtype(), &[t.len() as i64])),
                            None => first.map(|e| TypeInfo::fixed(e, &[])),
                        }
                    } else {
                        env.get(n).map(|k| k.ty.clone())
                    }
                })
                .collect();
            let values: Vec<Option<SymValue>> = node
                .input
                .iter()
                .map(|n| {
                    if n.is_empty() {
                        None
                    } else if let Some(c) = local(n) {
                        // a scalar of the input's type carries no shape
                        // value
                        c.fixed_tensor().and_then(|t| SymValue::of_tensor(&t))
                    } else {
                        env.get(n).and_then(|k| k.value.clone())
                    }
                })
                .collect();
            let domain = canonical_domain(node.domain());
            let n_out = node.output.len();
            let mut outs: Vec<Option<TypeInfo>> = vec![None; n_out];
            let mut out_values: Vec<Option<SymValue>> = vec![None; n_out];
            let functions = self.functions.clone();
            let function = if functions.is_empty() {
                None
            } else {
                functions.get(&(
                    domain.to_string(),
                    node.op_type().to_string(),
                    node.overload().to_string(),
                ))
            };
            let opset = self.opsets.get(domain);
            let rule = match (function, opset) {
                (None, Some(v)) => Some((v, self.rule(domain, node.op_type(), v))),
                _ => None,
            };
            match (function, rule) {
                (Some(f), _) => {
                    let (o, ov, warnings) = self.call_function(f, node, &inputs, &values);
                    for w in warnings {
                        self.report.warnings.push(format!("{who}: {w}"));
                    }
                    for (k, (t, v)) in o.into_iter().zip(ov).enumerate().take(n_out) {
                        outs[k] = t;
                        out_values[k] = v;
                    }
                }
                (None, None) => self.report.warnings.push(format!(
                    "{who}: the model imports no opset for domain '{domain}'"
                )),
                (None, Some((_, Err(why)))) => self.report.warnings.push(format!("{who}: {why}")),
                (None, Some((opset, Ok(rule)))) => {
                    let fresh = self.fresh.clone();
                    let env_ref = &env;
                    let mut sub_reports: Vec<(Vec<ValueReport>, Vec<String>)> = vec![];
                    let (opsets, functions, depth) = (&self.opsets, &self.functions, self.depth);
                    let equations = &mut self.equations;
                    let mut sub = |sg: &GraphProto, tys: Vec<Option<TypeInfo>>, sc: &str| {
                        let mut child = Engine {
                            opsets: opsets.clone(),
                            functions: functions.clone(),
                            depth,
                            fresh: fresh.clone(),
                            report: InferReport::default(),
                            equations: std::mem::take(equations),
                            rules: HashMap::new(),
                        };
                        let sc = if scope.is_empty() {
                            sc.to_string()
                        } else {
                            format!("{scope}/{sc}")
                        };
                        let given = tys
                            .into_iter()
                            .map(|t| t.map(|ty| Known { ty, value: None }))
                            .collect();
                        let (o, _) = child.graph(sg, Some(given), Some(env_ref), &sc);
                        *equations = child.equations;
                        sub_reports.push((child.report.values, child.report.warnings));
                        o.into_iter().map(|k| k.map(|k| (k.ty, k.value))).collect()
                    };
                    let mistyped = Cell::new(None);
                    let (res, warnings, o, ov) = {
                        let mut cx = InferCtx {
                            node,
                            opset,
                            attrs: Attrs::recording(node, &mistyped),
                            inputs,
                            values,
                            outputs: vec![None; n_out],
                            out_values: vec![None; n_out],
                            fresh: &self.fresh,
                            warnings: vec![],
                            subgraph: &mut sub,
                        };
                        let res = match (rule(&mut cx), mistyped.take()) {
                            (_, Some(e)) => Err(ShapeError::new(e.to_string())),
                            (res, None) => res,
                        };
                        (res, cx.warnings, cx.outputs, cx.out_values)
                    };
                    for (v, w) in sub_reports {
                        self.report.values.extend(v);
                        self.report.warnings.extend(w);
                    }
                    for w in warnings {
                        self.report.warnings.push(format!("{who}: {w}"));
                    }
                    match res {
                        Ok(()) => {
                            outs = o;
                            out_values = ov;
                        }
                        Err(e) => self.report.warnings.push(format!("{who}: {e}")),
                    }
                }
            }
            for (k, name) in node.output.iter().enumerate() {
                if name.is_empty() {
                    continue;
                }
                let inferred = outs.get(k).cloned().flatten();
                let decl = declared.get(name.as_str()).cloned();
                let (shown, used, source) =
                    self.merge(&who, name, decl, inferred.clone(), &input_syms);
                self.report.values.push(ValueReport {
                    name: name.clone(),
                    scope: scope.to_string(),
                    ty: shown,
                    source,
                });
                if inferred.is_some() && !outputs.contains(name.as_str()) {
                    written.push(ValueInfoProto {
                        name: Some(name.clone()),
                        r#type: Some(used.to_proto()),
                        ..Default::default()
                    });
                }
                env.vars.insert(
                    name.clone(),
                    Known {
                        ty: used,
                        value: out_values.get(k).cloned().flatten(),
                    },
                );
            }
        }
        let outs = g
            .output
            .iter()
            .map(|o| env.get(o.name()).cloned())
            .collect();
        (outs, written)
    }

    /// Merges declared and inferred types. Returns (type to show, type to
    /// propagate, source).
    fn merge(
        &mut self,
        who: &str,
        name: &str,
        decl: Option<TypeInfo>,
        inferred: Option<TypeInfo>,
        input_syms: &BTreeSet<String>,
    ) -> (TypeInfo, TypeInfo, Source) {
        match (decl, inferred) {
            (None, None) => (TypeInfo::Unknown, TypeInfo::Unknown, Source::Inferred),
            (Some(d), None) => (d.clone(), d, Source::Declared),
            (None, Some(i)) => (i.clone(), i, Source::Inferred),
            (Some(d), Some(i)) => {
                let (
                    TypeInfo::Tensor {
                        elem: de,
                        shape: ds,
                    },
                    TypeInfo::Tensor {
                        elem: ie,
                        shape: is,
                    },
                ) = (&d, &i)
                else {
                    return (d, i, Source::Both);
                };
                if *de != DataType::Undefined && *ie != DataType::Undefined && de != ie {
                    self.report.warnings.push(format!(
                        "{who}: '{name}' is declared {de} but inferred {ie}"
                    ));
                }
                let elem = if *ie != DataType::Undefined { *ie } else { *de };
                let mut won = Vec::new();
                let (shown, used) = match (ds, is) {
                    (None, s) | (s, None) => (s.clone(), s.clone()),
                    (Some(ds), Some(is)) if ds.len() != is.len() => {
                        self.report.warnings.push(format!(
                            "{who}: '{name}' is declared with rank {} but inferred with rank {}",
                            ds.len(),
                            is.len()
                        ));
                        (Some(is.clone()), Some(is.clone()))
                    }
                    (Some(ds), Some(is)) => {
                        let mut shown = Vec::with_capacity(ds.len());
                        let mut used = Vec::with_capacity(ds.len());
                        for (axis, (dd, id)) in ds.iter().zip(is).enumerate() {
                            let (s, u, w) = self.merge_dim(who, name, axis, dd, id, input_syms);
                            shown.push(s);
                            used.push(u);
                            won.push(w);
                        }
                        (Some(shown), Some(used))
                    }
                };
                // which sides said something that was kept: an axis where
                // they agree counts for both (a declared `?` refined by
                // inference next to agreeing axes is `both`)
                let agreed = won.contains(&Won::Agreed);
                let declared = agreed || won.contains(&Won::Declared);
                let inferred = agreed || won.contains(&Won::Inferred);
                let source = match (declared, inferred) {
                    // a declaration inference had to replace says nothing
                    _ if won.contains(&Won::Overrode) => Source::Inferred,
                    (true, false) => Source::Declared,
                    (false, true) => Source::Inferred,
                    _ => Source::Both,
                };
                (
                    TypeInfo::Tensor { elem, shape: shown },
                    TypeInfo::Tensor { elem, shape: used },
                    source,
                )
            }
        }
    }

    /// Merges one declared and one inferred dimension. Returns (dim to
    /// show, dim to propagate, which side won).
    fn merge_dim(
        &mut self,
        who: &str,
        name: &str,
        axis: usize,
        d: &Dim,
        i: &Dim,
        input_syms: &BTreeSet<String>,
    ) -> (Dim, Dim, Won) {
        match (d, i) {
            (None, None) => (None, None, Won::Neither),
            (None, x) => (x.clone(), x.clone(), Won::Inferred),
            (x, None) => (x.clone(), x.clone(), Won::Declared),
            (Some(de), Some(ie)) => {
                if de == ie {
                    return (d.clone(), i.clone(), Won::Agreed);
                }
                // a fresh symbol (a data-dependent size) says less than
                // any declared dimension
                if is_fresh(ie) && !is_fresh(de) {
                    return (d.clone(), d.clone(), Won::Declared);
                }
                let sym = de.symbols();
                let is_plain = sym.len() == 1
                    && de.to_string() == *sym.iter().next().unwrap_or(&String::new());
                if is_plain
                    && !input_syms.contains(&de.to_string())
                    && !ie.symbols().contains(&de.to_string())
                {
                    // a declared output symbol: inference says what it is
                    let s = de.to_string();
                    match self.equations.get(&s) {
                        Some(prev)
                            if prev.equals(ie) == Some(false)
                                || (prev != ie && prev.equals(ie).is_none()) =>
                        {
                            self.report.warnings.push(format!(
                                "{who}: '{name}' axis {axis}: {s} = {ie}, but earlier {s} = {prev}"
                            ));
                        }
                        Some(_) => {}
                        None => {
                            self.equations.insert(s, ie.clone());
                        }
                    }
                    return (d.clone(), i.clone(), Won::Agreed);
                }
                match dims_agree(de, ie) {
                    Some(true) => (i.clone(), i.clone(), Won::Agreed),
                    Some(false) => {
                        // the declaration is wrong: inference follows the
                        // operators, so it wins
                        self.report.warnings.push(format!(
                            "{who}: '{name}' axis {axis} is declared {de} but inferred {ie}; using {ie}"
                        ));
                        (i.clone(), i.clone(), Won::Overrode)
                    }
                    // a declared constant is more specific than an
                    // expression it cannot be told apart from
                    None if de.as_int().is_some() => (d.clone(), d.clone(), Won::Declared),
                    None => (i.clone(), i.clone(), Won::Overrode),
                }
            }
        }
    }
}
