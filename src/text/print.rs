//! The canonical printer: deterministic text that parses back to an equal
//! model, and [`expressible`], which says what the syntax cannot hold.
//!
//! Every part is appended to one output `String` (the `push_*` functions);
//! the few `String`-returning functions are for callers outside the printer.

use super::parse::{attr_type_name, is_ident, is_type_keyword};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_shape_proto::dimension;
use crate::proto::type_proto::Value as TypeValue;
use crate::proto::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use crate::tensor::DataType;
use rayon::prelude::*;
use std::fmt::{Display, Write};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeStyle {
    /// `float[]` is a scalar, `float` an unknown rank.
    Display,
    /// As the syntax: `float` is a scalar, `float[]` an unknown rank.
    Syntax,
}

/// Appends `v` with its `Display` form (integers).
fn push_display(s: &mut String, v: impl Display) {
    // Writing into a String cannot fail.
    let _ = write!(s, "{v}");
}

/// Appends `items` separated by `sep`, each written by `item`.
fn push_sep<T>(
    s: &mut String,
    items: impl IntoIterator<Item = T>,
    sep: &str,
    mut item: impl FnMut(&mut String, T),
) {
    for (k, x) in items.into_iter().enumerate() {
        if k > 0 {
            s.push_str(sep);
        }
        item(s, x);
    }
}

/// Appends a string literal: `"` and `\` are escaped with a backslash.
fn push_quoted(s: &mut String, v: &str) {
    s.reserve(v.len() + 2);
    s.push('"');
    let mut rest = v;
    // Both escaped characters are ASCII, so splitting at them keeps UTF-8 whole.
    while let Some(k) = rest.find(['"', '\\']) {
        s.push_str(&rest[..k]);
        s.push('\\');
        s.push_str(&rest[k..=k]);
        rest = &rest[k + 1..];
    }
    s.push_str(rest);
    s.push('"');
}

/// A string literal: `"` and `\` are escaped with a backslash.
pub(crate) fn quote(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    push_quoted(&mut s, v);
    s
}

fn push_quoted_bytes(s: &mut String, b: &[u8]) {
    push_quoted(s, &String::from_utf8_lossy(b));
}

/// Appends a name where an identifier or a quoted string may appear.
fn push_name(s: &mut String, v: &str) {
    if is_ident(v) {
        s.push_str(v);
    } else {
        push_quoted(s, v);
    }
}

/// Appends a name where a type could also start (graph and function
/// inputs, outputs): type words are quoted too.
fn push_vi_name(s: &mut String, v: &str) {
    if is_ident(v) && !is_type_keyword(v) {
        s.push_str(v);
    } else {
        push_quoted(s, v);
    }
}

fn push_names(s: &mut String, names: &[String]) {
    push_sep(s, names, ", ", |s, v| push_name(s, v));
}

fn push_elem_name(s: &mut String, code: Option<i32>) {
    match code.and_then(DataType::from_code) {
        Some(d) if d != DataType::Undefined => s.push_str(d.name()),
        _ => {
            s.push_str("undefined");
            push_display(s, code.unwrap_or(0));
        }
    }
}

fn push_dims(s: &mut String, shape: &TensorShapeProto) {
    push_sep(s, &shape.dim, ",", |s, d| match &d.value {
        Some(dimension::Value::DimValue(v)) => push_display(s, v),
        Some(dimension::Value::DimParam(p)) => push_name(s, p),
        None => s.push('?'),
    });
}

fn push_tensor_type(
    s: &mut String,
    elem: Option<i32>,
    shape: &Option<TensorShapeProto>,
    style: TypeStyle,
) {
    push_elem_name(s, elem);
    match (shape, style) {
        (None, TypeStyle::Display) => {}
        (None, TypeStyle::Syntax) => s.push_str("[]"),
        (Some(sh), TypeStyle::Syntax) if sh.dim.is_empty() => {}
        (Some(sh), _) => {
            s.push('[');
            push_dims(s, sh);
            s.push(']');
        }
    }
}

fn push_type(s: &mut String, t: &TypeProto, style: TypeStyle) {
    match &t.value {
        None => s.push('?'),
        Some(TypeValue::TensorType(tt)) => push_tensor_type(s, tt.elem_type, &tt.shape, style),
        Some(TypeValue::SparseTensorType(st)) => {
            s.push_str("sparse_tensor(");
            push_tensor_type(s, st.elem_type, &st.shape, style);
            s.push(')');
        }
        Some(TypeValue::SequenceType(q)) => {
            s.push_str("seq(");
            match &q.elem_type {
                Some(e) => push_type(s, e, style),
                None => s.push('?'),
            }
            s.push(')');
        }
        Some(TypeValue::OptionalType(o)) => {
            s.push_str("optional(");
            match &o.elem_type {
                Some(e) => push_type(s, e, style),
                None => s.push('?'),
            }
            s.push(')');
        }
        Some(TypeValue::MapType(m)) => {
            s.push_str("map(");
            push_elem_name(s, m.key_type);
            s.push_str(", ");
            match &m.value_type {
                Some(v) => push_type(s, v, style),
                None => s.push('?'),
            }
            s.push(')');
        }
        Some(TypeValue::OpaqueType(o)) => {
            s.push_str("opaque(");
            match (&o.domain, &o.name) {
                (None, None) => {}
                (None, Some(n)) => s.push_str(n),
                (Some(d), n) => {
                    s.push_str(d);
                    s.push_str(", ");
                    s.push_str(n.as_deref().unwrap_or(""));
                }
            }
            s.push(')');
        }
    }
}

pub(crate) fn type_text(t: &TypeProto, style: TypeStyle) -> String {
    let mut s = String::new();
    push_type(&mut s, t, style);
    s
}

/// Appends the shortest text that reads back as exactly `v` and lexes as
/// a float.
fn push_f32(s: &mut String, v: f32) {
    if v.is_nan() {
        s.push_str("nan");
    } else {
        // Debug gives the shortest round-trip form and keeps a '.' or an
        // exponent (`1.0`, `1e-30`), `inf`, `-inf`.
        let _ = write!(s, "{v:?}");
    }
}

fn push_f64(s: &mut String, v: f64) {
    if v.is_nan() {
        s.push_str("nan");
    } else {
        let _ = write!(s, "{v:?}");
    }
}

/// Shortest text that reads back as exactly `v` and lexes as a float.
pub(crate) fn f32_text(v: f32) -> String {
    let mut s = String::new();
    push_f32(&mut s, v);
    s
}

/// The values of a tensor, as written between braces. `raw_data` is
/// written as the typed values it holds (see `proto::raw_to_typed`), so
/// the text keeps every value; a raw_data whose size does not match the
/// shape has no values to write.
fn push_tensor_values(s: &mut String, t: &TensorProto) {
    if t.raw_data.is_some() {
        if let Ok(typed) = crate::proto::raw_to_typed(t) {
            push_tensor_values(s, &typed);
        }
        return;
    }
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push_str(", ");
        }
        first = false;
    };
    for x in &t.float_data {
        sep(s);
        push_f32(s, *x);
    }
    for x in &t.double_data {
        sep(s);
        push_f64(s, *x);
    }
    for x in &t.int32_data {
        sep(s);
        push_display(s, x);
    }
    for x in &t.int64_data {
        sep(s);
        push_display(s, x);
    }
    for x in &t.uint64_data {
        sep(s);
        push_display(s, x);
    }
    for x in &t.string_data {
        sep(s);
        push_quoted_bytes(s, x);
    }
}

fn push_tensor_type_of(s: &mut String, t: &TensorProto) {
    push_elem_name(s, t.data_type);
    if !t.dims.is_empty() {
        s.push('[');
        push_sep(s, &t.dims, ",", push_display);
        s.push(']');
    }
}

fn push_str_str_list(s: &mut String, entries: &[StringStringEntryProto]) {
    s.push('[');
    push_sep(s, entries, ", ", |s, e| {
        push_quoted(s, e.key.as_deref().unwrap_or(""));
        s.push_str(": ");
        push_quoted(s, e.value.as_deref().unwrap_or(""));
    });
    s.push(']');
}

fn push_opset_list(s: &mut String, ops: &[OperatorSetIdProto]) {
    s.push('[');
    push_sep(s, ops, ", ", |s, o| {
        push_quoted(s, o.domain.as_deref().unwrap_or(""));
        s.push_str(" : ");
        push_display(s, o.version.unwrap_or(0));
    });
    s.push(']');
}

/// `{1.0, 2.0}` or, for external data, `["location": "f"]`.
fn push_tensor_data(s: &mut String, t: &TensorProto) {
    if !t.external_data.is_empty() {
        push_str_str_list(s, &t.external_data);
    } else {
        s.push('{');
        push_tensor_values(s, t);
        s.push('}');
    }
}

/// An initializer: `float[2] w = {1.0, 2.0}`.
fn push_initializer(s: &mut String, t: &TensorProto) {
    push_tensor_type_of(s, t);
    s.push(' ');
    push_name(s, t.name.as_deref().unwrap_or(""));
    s.push_str(" = ");
    push_tensor_data(s, t);
}

/// A tensor attribute value: `float[2] {1.0, 2.0}` or `float[2] t {...}`.
fn push_tensor_const(s: &mut String, t: &TensorProto) {
    push_tensor_type_of(s, t);
    s.push(' ');
    let n = t.name.as_deref().unwrap_or("");
    if !n.is_empty() {
        push_name(s, n);
        s.push(' ');
    }
    push_tensor_data(s, t);
}

fn push_value_info(s: &mut String, v: &ValueInfoProto) {
    let n = v.name.as_deref().unwrap_or("");
    match &v.r#type {
        Some(t) => {
            push_type(s, t, TypeStyle::Syntax);
            s.push(' ');
            push_name(s, n);
        }
        None => push_vi_name(s, n),
    }
}

fn attr_kind(a: &AttributeProto) -> Option<AttributeType> {
    a.r#type.and_then(|t| AttributeType::try_from(t).ok())
}

/// Appends a bracketed list `[a, b]` of `items`, each written by `item`.
fn push_list<T>(
    s: &mut String,
    items: impl IntoIterator<Item = T>,
    item: impl FnMut(&mut String, T),
) {
    s.push('[');
    push_sep(s, items, ", ", item);
    s.push(']');
}

fn push_attr_value(s: &mut String, a: &AttributeProto, indent: usize) {
    match attr_kind(a) {
        Some(AttributeType::Int) => push_display(s, a.i.unwrap_or(0)),
        Some(AttributeType::Float) => push_f32(s, a.f.unwrap_or(0.0)),
        Some(AttributeType::String) => push_quoted_bytes(s, a.s.as_deref().unwrap_or(b"")),
        Some(AttributeType::Tensor) => {
            if let Some(t) = &a.t {
                push_tensor_const(s, t);
            }
        }
        Some(AttributeType::Graph) => {
            if let Some(g) = &a.g {
                push_graph_body(s, g, indent);
            }
        }
        Some(AttributeType::TypeProto) => {
            if let Some(t) = &a.tp {
                push_type(s, t, TypeStyle::Syntax);
            }
        }
        Some(AttributeType::Ints) => push_list(s, &a.ints, push_display),
        Some(AttributeType::Floats) => push_list(s, &a.floats, |s, x| push_f32(s, *x)),
        Some(AttributeType::Strings) => push_list(s, &a.strings, |s, x| push_quoted_bytes(s, x)),
        Some(AttributeType::Tensors) => push_list(s, &a.tensors, push_tensor_const),
        Some(AttributeType::Graphs) => {
            push_list(s, &a.graphs, |s, g| push_graph_body(s, g, indent))
        }
        Some(AttributeType::TypeProtos) => {
            push_list(s, &a.type_protos, |s, t| push_type(s, t, TypeStyle::Syntax))
        }
        _ => s.push_str("[]"),
    }
}

/// `name = value`, with `name: type = value` where the value alone would
/// not give the type back (empty lists, references with a type).
fn push_attr(s: &mut String, a: &AttributeProto, indent: usize) {
    s.push_str(a.name.as_deref().unwrap_or(""));
    let kind = attr_kind(a);
    if let Some(r) = &a.ref_attr_name {
        if let Some(k) = kind {
            s.push_str(": ");
            s.push_str(attr_type_name(k));
        }
        s.push_str(" = @");
        s.push_str(r);
        return;
    }
    let empty_list = match kind {
        Some(AttributeType::Ints) => a.ints.is_empty(),
        Some(AttributeType::Floats) => a.floats.is_empty(),
        Some(AttributeType::Strings) => a.strings.is_empty(),
        Some(AttributeType::Tensors) => a.tensors.is_empty(),
        Some(AttributeType::Graphs) => a.graphs.is_empty(),
        Some(AttributeType::TypeProtos) => a.type_protos.is_empty(),
        Some(AttributeType::SparseTensors) => true,
        _ => false,
    };
    match kind {
        Some(k) if empty_list || k == AttributeType::SparseTensor => {
            s.push_str(": ");
            s.push_str(attr_type_name(k));
        }
        _ => {}
    }
    s.push_str(" = ");
    push_attr_value(s, a, indent);
}

/// Appends one node's text to `s`.
fn push_node(s: &mut String, n: &NodeProto, indent: usize) {
    if let Some(label) = &n.name {
        if label.is_empty() {
            s.push_str("[] ");
        } else {
            s.push('[');
            push_name(s, label);
            s.push_str("] ");
        }
    }
    push_names(s, &n.output);
    if !n.output.is_empty() {
        s.push(' ');
    }
    s.push_str("= ");
    if let Some(d) = n.domain.as_deref().filter(|d| !d.is_empty()) {
        s.push_str(d);
        s.push('.');
    }
    s.push_str(n.op_type.as_deref().unwrap_or(""));
    if !n.attribute.is_empty() {
        s.push_str(" <");
        push_sep(s, &n.attribute, ", ", |s, a| push_attr(s, a, indent + 4));
        s.push('>');
    }
    s.push_str(" (");
    push_names(s, &n.input);
    s.push(')');
}

fn push_pad(s: &mut String, indent: usize) {
    s.extend(std::iter::repeat_n(' ', indent));
}

/// Blocks of at least this many nodes are printed in chunks of
/// [`CHUNK_NODES`] on the rayon pool, then joined in order: the printer
/// waits on memory more than it computes, so a second core helps.
pub(super) const PAR_NODES: usize = 4096;
const CHUNK_NODES: usize = 1024;

/// Appends one line per node, each indented by `indent` spaces.
fn push_node_lines(s: &mut String, nodes: &[NodeProto], indent: usize) {
    for n in nodes {
        push_pad(s, indent);
        push_node(s, n, indent);
        s.push('\n');
    }
}

fn push_node_block(s: &mut String, nodes: &[NodeProto], indent: usize) {
    push_pad(s, indent);
    s.push_str("{\n");
    if nodes.len() >= PAR_NODES && rayon::current_num_threads() > 1 {
        let parts: Vec<String> = nodes
            .par_chunks(CHUNK_NODES)
            .map(|chunk| {
                let mut part = String::with_capacity(chunk.len() * 48);
                push_node_lines(&mut part, chunk, indent + 2);
                part
            })
            .collect();
        s.reserve(parts.iter().map(String::len).sum::<usize>() + indent + 2);
        for part in &parts {
            s.push_str(part);
        }
    } else {
        s.reserve(nodes.len() * 48 + indent + 2);
        push_node_lines(s, nodes, indent + 2);
    }
    push_pad(s, indent);
    s.push('}');
}

/// The graph text; nested lines are indented by `indent` spaces.
fn push_graph_body(s: &mut String, g: &GraphProto, indent: usize) {
    let gname = g.name.as_deref().unwrap_or("");
    if indent == 0 || plain_subgraph_name(gname) {
        push_name(s, gname);
    } else {
        // Inside an attribute a type word or `nan` would read as a value;
        // quoted, the `(` that follows tells the parser it is a graph.
        push_quoted(s, gname);
    }
    s.push_str(" (");
    push_sep(s, &g.input, ", ", push_value_info);
    s.push_str(") => (");
    push_sep(s, &g.output, ", ", push_value_info);
    s.push(')');
    if !g.initializer.is_empty() || !g.value_info.is_empty() {
        s.push('\n');
        push_pad(s, indent);
        s.push('<');
        push_sep(s, &g.initializer, ", ", push_initializer);
        if !g.initializer.is_empty() && !g.value_info.is_empty() {
            s.push_str(", ");
        }
        push_sep(s, &g.value_info, ", ", push_value_info);
        s.push('>');
    }
    s.push('\n');
    push_node_block(s, &g.node, indent);
}

pub(crate) fn graph_text(g: &GraphProto) -> String {
    let mut s = String::new();
    push_graph_body(&mut s, g, 0);
    s.push('\n');
    s
}

/// The `<key: value, ...>` header of a model or a function: entries are
/// written as they come, the brackets only around at least one.
struct Header {
    open: &'static str,
    sep: &'static str,
    close: &'static str,
    any: bool,
}

impl Header {
    /// Starts the entry `key: `; its value is appended next.
    fn entry(&mut self, s: &mut String, key: &str) {
        s.push_str(if self.any { self.sep } else { self.open });
        self.any = true;
        s.push_str(key);
        s.push_str(": ");
    }

    fn finish(self, s: &mut String) {
        if self.any {
            s.push_str(self.close);
        }
    }
}

/// Appends the typed inputs or outputs of a function, which take the
/// leading value infos, in order.
fn push_function_io<'a>(
    s: &mut String,
    names: &[String],
    vis: &mut std::iter::Peekable<std::slice::Iter<'a, ValueInfoProto>>,
) {
    push_sep(s, names, ", ", |s, n| match vis.peek() {
        Some(v) if v.name.as_deref() == Some(n.as_str()) && v.r#type.is_some() => {
            push_value_info(s, v);
            vis.next();
        }
        _ => push_vi_name(s, n),
    });
}

fn push_function(s: &mut String, f: &FunctionProto) {
    let mut h = Header {
        open: "<",
        sep: ", ",
        close: ">\n",
        any: false,
    };
    if let Some(d) = &f.domain {
        h.entry(s, "domain");
        push_quoted(s, d);
    }
    if !f.opset_import.is_empty() {
        h.entry(s, "opset_import");
        push_opset_list(s, &f.opset_import);
    }
    if let Some(d) = &f.doc_string {
        h.entry(s, "doc_string");
        push_quoted(s, d);
    }
    if let Some(o) = &f.overload {
        h.entry(s, "overload");
        push_quoted(s, o);
    }
    h.finish(s);
    push_name(s, f.name.as_deref().unwrap_or(""));
    if !f.attribute.is_empty() || !f.attribute_proto.is_empty() {
        s.push_str(" <");
        push_sep(s, &f.attribute, ", ", |s, a| s.push_str(a));
        if !f.attribute.is_empty() && !f.attribute_proto.is_empty() {
            s.push_str(", ");
        }
        push_sep(s, &f.attribute_proto, ", ", |s, a| push_attr(s, a, 2));
        s.push('>');
    }
    let mut vis = f.value_info.iter().peekable();
    s.push_str(" (");
    push_function_io(s, &f.input, &mut vis);
    s.push_str(") => (");
    push_function_io(s, &f.output, &mut vis);
    s.push(')');
    if vis.peek().is_some() {
        s.push_str("\n<");
        push_sep(s, vis, ", ", push_value_info);
        s.push('>');
    }
    s.push('\n');
    push_node_block(s, &f.node, 0);
    s.push('\n');
}

pub(crate) fn model(m: &ModelProto) -> String {
    let mut s = String::new();
    let mut h = Header {
        open: "<\n  ",
        sep: ",\n  ",
        close: "\n>\n",
        any: false,
    };
    if let Some(v) = m.ir_version {
        h.entry(&mut s, "ir_version");
        push_display(&mut s, v);
    }
    if !m.opset_import.is_empty() {
        h.entry(&mut s, "opset_import");
        push_opset_list(&mut s, &m.opset_import);
    }
    if let Some(v) = &m.producer_name {
        h.entry(&mut s, "producer_name");
        push_quoted(&mut s, v);
    }
    if let Some(v) = &m.producer_version {
        h.entry(&mut s, "producer_version");
        push_quoted(&mut s, v);
    }
    if let Some(v) = &m.domain {
        h.entry(&mut s, "domain");
        push_quoted(&mut s, v);
    }
    if let Some(v) = m.model_version {
        h.entry(&mut s, "model_version");
        push_display(&mut s, v);
    }
    if let Some(v) = &m.doc_string {
        h.entry(&mut s, "doc_string");
        push_quoted(&mut s, v);
    }
    if !m.metadata_props.is_empty() {
        h.entry(&mut s, "metadata_props");
        push_str_str_list(&mut s, &m.metadata_props);
    }
    h.finish(&mut s);
    let default = GraphProto::default();
    push_graph_body(&mut s, m.graph.as_ref().unwrap_or(&default), 0);
    s.push('\n');
    for f in &m.functions {
        s.push('\n');
        push_function(&mut s, f);
    }
    s
}

// ----- what the syntax can hold ------------------------------------------------------

fn check(ok: bool, why: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why.to_string())
    }
}

fn check_type(t: &TypeProto) -> Result<(), String> {
    check(t.denotation.is_none(), "a type denotation")?;
    let tensor = |elem: Option<i32>, shape: &Option<TensorShapeProto>| -> Result<(), String> {
        check(
            matches!(elem.and_then(DataType::from_code), Some(d) if d != DataType::Undefined),
            "a tensor type without an element type",
        )?;
        if let Some(s) = shape {
            for d in &s.dim {
                check(d.denotation.is_none(), "a dimension denotation")?;
            }
        }
        Ok(())
    };
    match &t.value {
        None => Err("a type with no value".into()),
        Some(TypeValue::TensorType(tt)) => tensor(tt.elem_type, &tt.shape),
        Some(TypeValue::SparseTensorType(st)) => tensor(st.elem_type, &st.shape),
        Some(TypeValue::SequenceType(s)) => match &s.elem_type {
            Some(e) => check_type(e),
            None => Err("a sequence type without an element type".into()),
        },
        Some(TypeValue::OptionalType(s)) => match &s.elem_type {
            Some(e) => check_type(e),
            None => Err("an optional type without an element type".into()),
        },
        Some(TypeValue::MapType(m)) => {
            check(
                m.key_type.and_then(DataType::from_code).is_some(),
                "a map without a key type",
            )?;
            match &m.value_type {
                Some(v) => check_type(v),
                None => Err("a map without a value type".into()),
            }
        }
        Some(TypeValue::OpaqueType(o)) => {
            let qualified = |s: &str| s.split('.').all(is_ident);
            match (&o.domain, &o.name) {
                (None, None) => Ok(()),
                (None, Some(n)) => check(qualified(n), "an opaque name that is not an identifier"),
                (Some(d), Some(n)) => check(
                    qualified(d) && is_ident(n),
                    "an opaque domain or name that is not an identifier",
                ),
                (Some(_), None) => Err("an opaque type with a domain and no name".into()),
            }
        }
    }
}

fn check_value_info(v: &ValueInfoProto, typed: bool) -> Result<(), String> {
    check(v.name.is_some(), "a value info without a name")?;
    check(v.doc_string.is_none(), "a value info doc_string")?;
    check(v.metadata_props.is_empty(), "value info metadata_props")?;
    match &v.r#type {
        Some(t) => check_type(t),
        None => check(!typed, "a value info without a type"),
    }
}

fn check_tensor(t: &TensorProto, attribute: bool) -> Result<(), String> {
    use DataType as D;
    let d = t
        .data_type
        .and_then(DataType::from_code)
        .filter(|d| *d != D::Undefined)
        .ok_or("a tensor without an element type")?;
    check(t.raw_data.is_none(), "tensor raw_data")?;
    check(t.segment.is_none(), "a tensor segment")?;
    check(t.doc_string.is_none(), "a tensor doc_string")?;
    check(t.metadata_props.is_empty(), "tensor metadata_props")?;
    check(t.name.is_some(), "a tensor without a name field")?;
    if attribute {
        check(
            t.external_data.is_empty(),
            "external data in a tensor attribute",
        )?;
    }
    for s in &t.string_data {
        check(std::str::from_utf8(s).is_ok(), "a string that is not UTF-8")?;
    }
    let field = match d {
        D::Float | D::Complex64 => 0,
        D::Double | D::Complex128 => 1,
        D::Int64 => 3,
        D::Uint32 | D::Uint64 => 4,
        D::String => 5,
        _ => 2,
    };
    let lens = [
        t.float_data.len(),
        t.double_data.len(),
        t.int32_data.len(),
        t.int64_data.len(),
        t.uint64_data.len(),
        t.string_data.len(),
    ];
    for (i, l) in lens.iter().enumerate() {
        check(
            i == field || *l == 0,
            "tensor values in a field that does not match the element type",
        )?;
    }
    if t.external_data.is_empty() {
        check(t.data_location.is_none(), "an explicit data_location")?;
    } else {
        check(
            t.data_location == Some(crate::proto::tensor_proto::DataLocation::External as i32)
                && lens.iter().all(|l| *l == 0),
            "external data with inline values or without data_location EXTERNAL",
        )?;
    }
    Ok(())
}

fn check_attr(a: &AttributeProto) -> Result<(), String> {
    let n = a.name.as_deref().unwrap_or("");
    check(
        a.name.is_some() && is_ident(n),
        "an attribute name that is not an identifier",
    )?;
    check(a.doc_string.is_none(), "an attribute doc_string")?;
    let kind = attr_kind(a);
    let fields = [
        ("f", a.f.is_some()),
        ("i", a.i.is_some()),
        ("s", a.s.is_some()),
        ("t", a.t.is_some()),
        ("g", a.g.is_some()),
        ("tp", a.tp.is_some()),
        ("sparse_tensor", a.sparse_tensor.is_some()),
        ("floats", !a.floats.is_empty()),
        ("ints", !a.ints.is_empty()),
        ("strings", !a.strings.is_empty()),
        ("tensors", !a.tensors.is_empty()),
        ("graphs", !a.graphs.is_empty()),
        ("type_protos", !a.type_protos.is_empty()),
        ("sparse_tensors", !a.sparse_tensors.is_empty()),
    ];
    if let Some(r) = &a.ref_attr_name {
        check(
            is_ident(r),
            "an attribute reference that is not an identifier",
        )?;
        check(
            kind != Some(AttributeType::Undefined),
            "an UNDEFINED attribute type",
        )?;
        return check(
            fields.iter().all(|f| !f.1),
            "an attribute reference with a value",
        );
    }
    let want = match kind {
        Some(AttributeType::Float) => "f",
        Some(AttributeType::Int) => "i",
        Some(AttributeType::String) => "s",
        Some(AttributeType::Tensor) => "t",
        Some(AttributeType::Graph) => "g",
        Some(AttributeType::TypeProto) => "tp",
        Some(AttributeType::Floats) => "floats",
        Some(AttributeType::Ints) => "ints",
        Some(AttributeType::Strings) => "strings",
        Some(AttributeType::Tensors) => "tensors",
        Some(AttributeType::Graphs) => "graphs",
        Some(AttributeType::TypeProtos) => "type_protos",
        Some(AttributeType::SparseTensor) | Some(AttributeType::SparseTensors) => {
            return Err("a sparse tensor attribute".into())
        }
        _ => return Err("an attribute without a type".into()),
    };
    for (f, set) in fields {
        check(
            f == want || !set,
            "an attribute with a value that does not match its type",
        )?;
    }
    let single = matches!(want, "f" | "i" | "s" | "t" | "g" | "tp");
    if single {
        check(
            fields.iter().any(|f| f.0 == want && f.1),
            "an attribute without its value",
        )?;
    }
    if let Some(s) = &a.s {
        check(std::str::from_utf8(s).is_ok(), "a string that is not UTF-8")?;
    }
    for s in &a.strings {
        check(std::str::from_utf8(s).is_ok(), "a string that is not UTF-8")?;
    }
    if let Some(t) = &a.t {
        check_tensor(t, true)?;
    }
    for t in &a.tensors {
        check_tensor(t, true)?;
    }
    if let Some(g) = &a.g {
        check_graph(g)?;
    }
    for g in &a.graphs {
        check_graph(g)?;
    }
    if let Some(t) = &a.tp {
        check_type(t)?;
    }
    for t in &a.type_protos {
        check_type(t)?;
    }
    Ok(())
}

fn check_node(n: &NodeProto) -> Result<(), String> {
    check(n.doc_string.is_none(), "a node doc_string")?;
    check(n.overload.is_none(), "a node overload")?;
    check(n.metadata_props.is_empty(), "node metadata_props")?;
    check(
        n.domain.is_some(),
        "a node without a domain field (the parser sets \"\")",
    )?;
    let d = n.domain.as_deref().unwrap_or("");
    check(
        d.is_empty() || d.split('.').all(is_ident),
        "a node domain that is not a dotted identifier",
    )?;
    check(
        is_ident(n.op_type.as_deref().unwrap_or("")),
        "an op_type that is not an identifier",
    )?;
    // A trailing empty name would be read as a trailing comma; it is
    // printed quoted, which keeps it.
    for a in &n.attribute {
        check_attr(a)?;
    }
    Ok(())
}

/// A subgraph name that can be written bare inside an attribute.
fn plain_subgraph_name(n: &str) -> bool {
    is_ident(n)
        && !is_type_keyword(n)
        && !matches!(n.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity")
}

fn check_graph(g: &GraphProto) -> Result<(), String> {
    g.name.as_deref().ok_or("a graph without a name field")?;
    check(g.doc_string.is_none(), "a graph doc_string")?;
    check(
        g.quantization_annotation.is_empty(),
        "quantization annotations",
    )?;
    check(g.sparse_initializer.is_empty(), "sparse initializers")?;
    check(g.metadata_props.is_empty(), "graph metadata_props")?;
    for v in &g.input {
        check_value_info(v, false)?;
    }
    for v in &g.output {
        check_value_info(v, false)?;
    }
    for v in &g.value_info {
        check_value_info(v, true)?;
    }
    for t in &g.initializer {
        check_tensor(t, false)?;
    }
    for node in &g.node {
        check_node(node)?;
    }
    Ok(())
}

fn check_function(f: &FunctionProto) -> Result<(), String> {
    check(f.name.is_some(), "a function without a name")?;
    check(f.metadata_props.is_empty(), "function metadata_props")?;
    for a in &f.attribute {
        check(
            is_ident(a),
            "a function attribute name that is not an identifier",
        )?;
    }
    for a in &f.attribute_proto {
        check_attr(a)?;
    }
    // Value infos print inline with the inputs and outputs they follow,
    // the rest in the `<...>` list; any order reads back the same.
    for v in &f.value_info {
        check_value_info(v, true)?;
    }
    for n in &f.node {
        check_node(n)?;
    }
    Ok(())
}

/// Whether the text syntax can hold `m` exactly, i.e. whether
/// `parse_model(&print_model(m)) == *m` holds; `Err` names the first
/// feature the syntax cannot express (raw tensor data, doc strings on
/// graphs and nodes, sparse tensors, training info, ...).
pub fn expressible(m: &ModelProto) -> Result<(), String> {
    check(m.training_info.is_empty(), "training_info")?;
    let Some(g) = &m.graph else {
        return Err("a model without a graph".into());
    };
    for o in &m.opset_import {
        check(
            o.domain.is_some() && o.version.is_some(),
            "an opset import with a missing field",
        )?;
    }
    for p in &m.metadata_props {
        check(
            p.key.is_some() && p.value.is_some(),
            "a metadata entry with a missing field",
        )?;
    }
    check_graph(g)?;
    for f in &m.functions {
        check_function(f)?;
    }
    Ok(())
}
