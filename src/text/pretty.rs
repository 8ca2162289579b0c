//! The pretty summary: one fact per line.
//!
//! ```text
//! opset: domain='' version=18
//! graph: name='agraph'
//! input: float[N,4] x
//! init: float[] two
//! 0: Mul(x, two) -> z
//! 1: Concat(a, b) <axis=1> -> c
//! output: float[M,2] y
//! function: local.F(x) -> z
//!   0: Identity(x) -> z
//! ```
//!
//! Subgraph attributes are summarised beneath their node, indented.

use super::print::{f32_text, quote, TypeStyle};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto};
use crate::tensor::DataType;
use std::fmt::Write;

fn elem(code: Option<i32>) -> String {
    DataType::name_of_code(code.unwrap_or(0))
}

/// `float[2,3]`, `float[]` for a scalar.
fn tensor_shape(t: &TensorProto) -> String {
    let d: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", elem(t.data_type), d.join(","))
}

fn bytes(b: &[u8]) -> String {
    quote(&String::from_utf8_lossy(b))
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    const MAX: usize = 8;
    let mut parts: Vec<String> = items.iter().take(MAX).map(f).collect();
    if items.len() > MAX {
        parts.push(format!("... {} items", items.len()));
    }
    format!("[{}]", parts.join(", "))
}

fn attr_value(a: &AttributeProto) -> String {
    if let Some(r) = &a.ref_attr_name {
        return format!("@{r}");
    }
    let kind = a.r#type.and_then(|t| AttributeType::try_from(t).ok());
    match kind {
        // element-type attributes (Cast's `to`, the random ops' `dtype`,
        // QuantizeLinear's `output_dtype`) by their type name
        Some(AttributeType::Int) if matches!(a.name(), "to" | "dtype" | "output_dtype") => {
            let code = a.i.unwrap_or(0);
            i32::try_from(code)
                .ok()
                .and_then(crate::tensor::DataType::from_code)
                .map(|t| t.name().to_string())
                .unwrap_or_else(|| code.to_string())
        }
        Some(AttributeType::Int) => a.i.unwrap_or(0).to_string(),
        Some(AttributeType::Float) => f32_text(a.f.unwrap_or(0.0)),
        Some(AttributeType::String) => bytes(a.s.as_deref().unwrap_or(b"")),
        Some(AttributeType::Tensor) => {
            a.t.as_ref()
                .map(tensor_shape)
                .unwrap_or_else(|| "tensor".into())
        }
        Some(AttributeType::Graph) => "graph".into(),
        Some(AttributeType::TypeProto) => a.tp.as_ref().map(super::format_type).unwrap_or_default(),
        Some(AttributeType::SparseTensor) => "sparse_tensor".into(),
        Some(AttributeType::Ints) => list(&a.ints, |x| x.to_string()),
        Some(AttributeType::Floats) => list(&a.floats, |x| f32_text(*x)),
        Some(AttributeType::Strings) => list(&a.strings, |x| bytes(x)),
        Some(AttributeType::Tensors) => list(&a.tensors, tensor_shape),
        Some(AttributeType::Graphs) => format!("{} graphs", a.graphs.len()),
        Some(AttributeType::TypeProtos) => list(&a.type_protos, super::format_type),
        Some(AttributeType::SparseTensors) => {
            format!("{} sparse tensors", a.sparse_tensors.len())
        }
        _ => "?".into(),
    }
}

fn node_line(i: usize, n: &NodeProto) -> String {
    let mut s = format!("{i}: ");
    if let Some(d) = n.domain.as_deref().filter(|d| !d.is_empty()) {
        let _ = write!(s, "{d}.");
    }
    let _ = write!(s, "{}({})", n.op_type(), n.input.join(", "));
    if !n.attribute.is_empty() {
        let attrs: Vec<String> = n
            .attribute
            .iter()
            .map(|a| format!("{}={}", a.name(), attr_value(a)))
            .collect();
        let _ = write!(s, " <{}>", attrs.join(", "));
    }
    let _ = write!(s, " -> {}", n.output.join(", "));
    if let Some(name) = n.name.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(s, "  [{name}]");
    }
    s
}

fn nodes(out: &mut String, ns: &[NodeProto], pad: &str) {
    for (i, n) in ns.iter().enumerate() {
        let _ = writeln!(out, "{pad}{}", node_line(i, n));
        for a in &n.attribute {
            let inner = format!("{pad}    ");
            if let Some(g) = &a.g {
                let _ = writeln!(out, "{pad}  {}:", a.name());
                graph(out, g, &inner);
            }
            for (k, g) in a.graphs.iter().enumerate() {
                let _ = writeln!(out, "{pad}  {}[{k}]:", a.name());
                graph(out, g, &inner);
            }
        }
    }
}

fn graph(out: &mut String, g: &GraphProto, pad: &str) {
    let _ = writeln!(out, "{pad}graph: name='{}'", g.name());
    for v in &g.input {
        let _ = writeln!(out, "{pad}input: {}", value_info(v));
    }
    for t in &g.initializer {
        let _ = writeln!(out, "{pad}init: {} {}", tensor_shape(t), t.name());
    }
    nodes(out, &g.node, pad);
    for v in &g.output {
        let _ = writeln!(out, "{pad}output: {}", value_info(v));
    }
    for v in &g.value_info {
        let _ = writeln!(out, "{pad}value_info: {}", value_info(v));
    }
}

fn value_info(v: &crate::proto::ValueInfoProto) -> String {
    match &v.r#type {
        Some(t) => format!(
            "{} {}",
            super::print::type_text(t, TypeStyle::Display),
            v.name()
        ),
        None => v.name().to_string(),
    }
}

pub(crate) fn model(m: &ModelProto) -> String {
    let mut out = String::new();
    for o in &m.opset_import {
        let _ = writeln!(
            out,
            "opset: domain='{}' version={}",
            o.domain(),
            o.version()
        );
    }
    if let Some(g) = &m.graph {
        graph(&mut out, g, "");
    }
    for f in &m.functions {
        let mut s = String::from("function: ");
        if let Some(d) = f.domain.as_deref().filter(|d| !d.is_empty()) {
            let _ = write!(s, "{d}.");
        }
        let _ = write!(
            s,
            "{}({}) -> {}",
            f.name(),
            f.input.join(", "),
            f.output.join(", ")
        );
        let mut attrs: Vec<String> = f.attribute.clone();
        attrs.extend(
            f.attribute_proto
                .iter()
                .map(|a| format!("{}={}", a.name(), attr_value(a))),
        );
        if !attrs.is_empty() {
            let _ = write!(s, " <{}>", attrs.join(", "));
        }
        let _ = writeln!(out, "{s}");
        nodes(&mut out, &f.node, "  ");
    }
    out
}
