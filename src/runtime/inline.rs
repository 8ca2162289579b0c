//! Expansion of model-local functions: a node that calls a `FunctionProto`
//! of the model is replaced by the function's body, with formal inputs and
//! outputs renamed to the actual ones, internal values given unique names,
//! and `@attr` references resolved from the call (or the defaults).

use super::plan::PlanError;
use crate::proto::{AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto};
use std::collections::HashMap;

/// How deep function calls may nest (guards against recursion).
const MAX_DEPTH: usize = 32;

type Functions<'a> = HashMap<(String, String), &'a FunctionProto>;

/// The main graph with every call to a model-local function expanded.
pub fn expand_functions(model: &ModelProto) -> Result<Option<GraphProto>, PlanError> {
    if model.functions.is_empty() {
        return Ok(None);
    }
    let Some(g) = model.graph.as_ref() else {
        return Ok(None);
    };
    let funcs: Functions = model
        .functions
        .iter()
        .map(|f| ((f.domain().to_string(), f.name().to_string()), f))
        .collect();
    let mut counter = 0usize;
    let mut out = g.clone();
    out.node = expand_nodes(&g.node, &funcs, &mut counter, 0)?;
    Ok(Some(out))
}

fn expand_nodes(
    nodes: &[NodeProto],
    funcs: &Functions,
    counter: &mut usize,
    depth: usize,
) -> Result<Vec<NodeProto>, PlanError> {
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        let key = (n.domain().to_string(), n.op_type().to_string());
        match funcs.get(&key) {
            Some(f) => {
                if depth >= MAX_DEPTH {
                    return Err(PlanError::FunctionDepth {
                        function: n.op_type().to_string(),
                        limit: MAX_DEPTH,
                    });
                }
                let body = instantiate(n, f, counter)?;
                out.extend(expand_nodes(&body, funcs, counter, depth + 1)?);
            }
            None => {
                let mut n = n.clone();
                for a in &mut n.attribute {
                    if let Some(g) = &mut a.g {
                        g.node = expand_nodes(&g.node, funcs, counter, depth)?;
                    }
                    for g in &mut a.graphs {
                        g.node = expand_nodes(&g.node, funcs, counter, depth)?;
                    }
                }
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// The body of `f` for one call `n`.
fn instantiate(
    n: &NodeProto,
    f: &FunctionProto,
    counter: &mut usize,
) -> Result<Vec<NodeProto>, PlanError> {
    *counter += 1;
    let tag = *counter;
    let mut rename: HashMap<String, String> = HashMap::new();
    for (i, formal) in f.input.iter().enumerate() {
        rename.insert(formal.clone(), n.input.get(i).cloned().unwrap_or_default());
    }
    for (i, formal) in f.output.iter().enumerate() {
        rename.insert(formal.clone(), n.output.get(i).cloned().unwrap_or_default());
    }
    let prefix = format!(
        "{}__{}{tag}__",
        f.name(),
        if n.name().is_empty() {
            "call"
        } else {
            n.name()
        }
    );
    let mut attrs: HashMap<&str, &AttributeProto> = HashMap::new();
    for a in &f.attribute_proto {
        attrs.insert(a.name(), a);
    }
    for a in &n.attribute {
        attrs.insert(a.name(), a);
    }
    let mut body = Vec::with_capacity(f.node.len());
    for bn in &f.node {
        let mut m = bn.clone();
        let map = |s: &String, rename: &mut HashMap<String, String>| -> String {
            if s.is_empty() {
                return String::new();
            }
            rename
                .entry(s.clone())
                .or_insert_with(|| format!("{prefix}{s}"))
                .clone()
        };
        m.input = bn.input.iter().map(|s| map(s, &mut rename)).collect();
        m.output = bn.output.iter().map(|s| map(s, &mut rename)).collect();
        let mut kept = Vec::with_capacity(m.attribute.len());
        for a in m.attribute {
            if a.ref_attr_name.as_deref().is_some_and(|r| !r.is_empty()) {
                let r = a.ref_attr_name();
                if let Some(actual) = attrs.get(r) {
                    let mut v = (*actual).clone();
                    v.name = a.name.clone();
                    v.ref_attr_name = None;
                    kept.push(v);
                }
                // an unset optional attribute without default is dropped
            } else {
                kept.push(a);
            }
        }
        m.attribute = kept;
        // values a subgraph reads from the function body get the same names
        for a in &mut m.attribute {
            for g in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                rename_graph_reads(g, &rename);
            }
        }
        body.push(m);
    }
    Ok(body)
}

fn rename_graph_reads(g: &mut GraphProto, rename: &HashMap<String, String>) {
    for n in &mut g.node {
        for i in &mut n.input {
            if let Some(r) = rename.get(i.as_str()) {
                *i = r.clone();
            }
        }
        for a in &mut n.attribute {
            for sg in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                rename_graph_reads(sg, rename);
            }
        }
    }
    for o in &mut g.output {
        if let Some(r) = rename.get(o.name()) {
            o.name = Some(r.clone());
        }
    }
}
