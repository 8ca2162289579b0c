//! The canonical printer: deterministic text that parses back to an equal
//! model, and [`expressible`], which says what the syntax cannot hold.

use super::parse::{attr_type_name, is_ident, is_type_keyword};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_shape_proto::dimension;
use crate::proto::type_proto::Value as TypeValue;
use crate::proto::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use crate::tensor::DataType;
use std::fmt::Write;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeStyle {
    /// `float[]` is a scalar, `float` an unknown rank.
    Display,
    /// As the syntax: `float` is a scalar, `float[]` an unknown rank.
    Syntax,
}

/// A string literal: `"` and `\` are escaped with a backslash.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn quote_bytes(b: &[u8]) -> String {
    quote(&String::from_utf8_lossy(b))
}

/// A name where an identifier or a quoted string may appear.
pub(crate) fn name(s: &str) -> String {
    if is_ident(s) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// A name where a type could also start (graph and function inputs,
/// outputs): type words are quoted too.
fn vi_name(s: &str) -> String {
    if is_ident(s) && !is_type_keyword(s) {
        s.to_string()
    } else {
        quote(s)
    }
}

fn elem_name(code: Option<i32>) -> String {
    match code.and_then(DataType::from_code) {
        Some(d) if d != DataType::Undefined => d.name().to_string(),
        _ => format!("undefined{}", code.unwrap_or(0)),
    }
}

fn dims_text(shape: &TensorShapeProto) -> String {
    let parts: Vec<String> = shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(dimension::Value::DimValue(v)) => v.to_string(),
            Some(dimension::Value::DimParam(p)) => name(p),
            None => "?".to_string(),
        })
        .collect();
    parts.join(",")
}

fn tensor_type_text(
    elem: Option<i32>,
    shape: &Option<TensorShapeProto>,
    style: TypeStyle,
) -> String {
    let e = elem_name(elem);
    match (shape, style) {
        (None, TypeStyle::Display) => e,
        (None, TypeStyle::Syntax) => format!("{e}[]"),
        (Some(s), TypeStyle::Syntax) if s.dim.is_empty() => e,
        (Some(s), _) => format!("{e}[{}]", dims_text(s)),
    }
}

pub(crate) fn type_text(t: &TypeProto, style: TypeStyle) -> String {
    match &t.value {
        None => "?".to_string(),
        Some(TypeValue::TensorType(tt)) => tensor_type_text(tt.elem_type, &tt.shape, style),
        Some(TypeValue::SparseTensorType(st)) => {
            format!(
                "sparse_tensor({})",
                tensor_type_text(st.elem_type, &st.shape, style)
            )
        }
        Some(TypeValue::SequenceType(s)) => match &s.elem_type {
            Some(e) => format!("seq({})", type_text(e, style)),
            None => "seq(?)".to_string(),
        },
        Some(TypeValue::OptionalType(s)) => match &s.elem_type {
            Some(e) => format!("optional({})", type_text(e, style)),
            None => "optional(?)".to_string(),
        },
        Some(TypeValue::MapType(m)) => {
            let v = m
                .value_type
                .as_ref()
                .map(|v| type_text(v, style))
                .unwrap_or_else(|| "?".to_string());
            format!("map({}, {v})", elem_name(m.key_type))
        }
        Some(TypeValue::OpaqueType(o)) => match (&o.domain, &o.name) {
            (None, None) => "opaque()".to_string(),
            (None, Some(n)) => format!("opaque({n})"),
            (Some(d), n) => format!("opaque({d}, {})", n.as_deref().unwrap_or("")),
        },
    }
}

/// Shortest text that reads back as exactly `v` and lexes as a float.
pub(crate) fn f32_text(v: f32) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else {
        // Debug gives the shortest round-trip form and keeps a '.' or an
        // exponent (`1.0`, `1e-30`), `inf`, `-inf`.
        format!("{v:?}")
    }
}

pub(crate) fn f64_text(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else {
        format!("{v:?}")
    }
}

/// The values of a tensor, as written between braces.
fn tensor_values(t: &TensorProto) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    v.extend(t.float_data.iter().map(|x| f32_text(*x)));
    v.extend(t.double_data.iter().map(|x| f64_text(*x)));
    v.extend(t.int32_data.iter().map(|x| x.to_string()));
    v.extend(t.int64_data.iter().map(|x| x.to_string()));
    v.extend(t.uint64_data.iter().map(|x| x.to_string()));
    v.extend(t.string_data.iter().map(|x| quote_bytes(x)));
    v
}

fn tensor_type_of(t: &TensorProto) -> String {
    let e = elem_name(t.data_type);
    if t.dims.is_empty() {
        e
    } else {
        let d: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
        format!("{e}[{}]", d.join(","))
    }
}

fn str_str_list(entries: &[StringStringEntryProto]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                quote(e.key.as_deref().unwrap_or("")),
                quote(e.value.as_deref().unwrap_or(""))
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn opset_list(ops: &[OperatorSetIdProto]) -> String {
    let items: Vec<String> = ops
        .iter()
        .map(|o| {
            format!(
                "{} : {}",
                quote(o.domain.as_deref().unwrap_or("")),
                o.version.unwrap_or(0)
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// `{1.0, 2.0}` or, for external data, `["location": "f"]`.
fn tensor_data_text(t: &TensorProto) -> String {
    if !t.external_data.is_empty() {
        str_str_list(&t.external_data)
    } else {
        format!("{{{}}}", tensor_values(t).join(", "))
    }
}

/// An initializer: `float[2] w = {1.0, 2.0}`.
fn initializer_text(t: &TensorProto) -> String {
    format!(
        "{} {} = {}",
        tensor_type_of(t),
        name(t.name.as_deref().unwrap_or("")),
        tensor_data_text(t)
    )
}

/// A tensor attribute value: `float[2] {1.0, 2.0}` or `float[2] t {...}`.
fn tensor_const_text(t: &TensorProto) -> String {
    let n = t.name.as_deref().unwrap_or("");
    if n.is_empty() {
        format!("{} {}", tensor_type_of(t), tensor_data_text(t))
    } else {
        format!("{} {} {}", tensor_type_of(t), n, tensor_data_text(t))
    }
}

fn value_info_text(v: &ValueInfoProto) -> String {
    let n = v.name.as_deref().unwrap_or("");
    match &v.r#type {
        Some(t) => format!("{} {}", type_text(t, TypeStyle::Syntax), name(n)),
        None => vi_name(n),
    }
}

fn attr_kind(a: &AttributeProto) -> Option<AttributeType> {
    a.r#type.and_then(|t| AttributeType::try_from(t).ok())
}

fn attr_value_text(a: &AttributeProto, indent: usize) -> String {
    let join = |v: Vec<String>| format!("[{}]", v.join(", "));
    match attr_kind(a) {
        Some(AttributeType::Int) => a.i.unwrap_or(0).to_string(),
        Some(AttributeType::Float) => f32_text(a.f.unwrap_or(0.0)),
        Some(AttributeType::String) => quote_bytes(a.s.as_deref().unwrap_or(b"")),
        Some(AttributeType::Tensor) => a.t.as_ref().map(tensor_const_text).unwrap_or_default(),
        Some(AttributeType::Graph) => {
            a.g.as_ref()
                .map(|g| graph_body(g, indent))
                .unwrap_or_default()
        }
        Some(AttributeType::TypeProto) => {
            a.tp.as_ref()
                .map(|t| type_text(t, TypeStyle::Syntax))
                .unwrap_or_default()
        }
        Some(AttributeType::Ints) => join(a.ints.iter().map(|x| x.to_string()).collect()),
        Some(AttributeType::Floats) => join(a.floats.iter().map(|x| f32_text(*x)).collect()),
        Some(AttributeType::Strings) => join(a.strings.iter().map(|x| quote_bytes(x)).collect()),
        Some(AttributeType::Tensors) => join(a.tensors.iter().map(tensor_const_text).collect()),
        Some(AttributeType::Graphs) => {
            join(a.graphs.iter().map(|g| graph_body(g, indent)).collect())
        }
        Some(AttributeType::TypeProtos) => join(
            a.type_protos
                .iter()
                .map(|t| type_text(t, TypeStyle::Syntax))
                .collect(),
        ),
        _ => "[]".to_string(),
    }
}

/// `name = value`, with `name: type = value` where the value alone would
/// not give the type back (empty lists, references with a type).
pub(crate) fn attr_text(a: &AttributeProto, indent: usize) -> String {
    let n = a.name.as_deref().unwrap_or("");
    let kind = attr_kind(a);
    if let Some(r) = &a.ref_attr_name {
        return match kind {
            Some(k) => format!("{n}: {} = @{r}", attr_type_name(k)),
            None => format!("{n} = @{r}"),
        };
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
            format!(
                "{n}: {} = {}",
                attr_type_name(k),
                attr_value_text(a, indent)
            )
        }
        _ => format!("{n} = {}", attr_value_text(a, indent)),
    }
}

/// Writes a name where an identifier or a quoted string may appear.
fn push_name(s: &mut String, v: &str) {
    if is_ident(v) {
        s.push_str(v);
    } else {
        s.push_str(&quote(v));
    }
}

fn push_names(s: &mut String, names: &[String]) {
    for (k, v) in names.iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        push_name(s, v);
    }
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
        for (k, a) in n.attribute.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            s.push_str(&attr_text(a, indent + 4));
        }
        s.push('>');
    }
    s.push_str(" (");
    push_names(s, &n.input);
    s.push(')');
}

fn node_block(nodes: &[NodeProto], indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut s = String::with_capacity(nodes.len() * 48 + 8);
    s.push_str(&pad);
    s.push_str("{\n");
    for n in nodes {
        s.push_str(&pad);
        s.push_str("  ");
        push_node(&mut s, n, indent + 2);
        s.push('\n');
    }
    s.push_str(&pad);
    s.push('}');
    s
}

/// The graph text; nested lines are indented by `indent` spaces.
fn graph_body(g: &GraphProto, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let ins: Vec<String> = g.input.iter().map(value_info_text).collect();
    let outs: Vec<String> = g.output.iter().map(value_info_text).collect();
    let gname = g.name.as_deref().unwrap_or("");
    let gname = if indent == 0 {
        name(gname)
    } else {
        // Inside an attribute a quoted string would read as a string value.
        gname.to_string()
    };
    let mut s = format!("{gname} ({}) => ({})", ins.join(", "), outs.join(", "));
    let mut extra: Vec<String> = g.initializer.iter().map(initializer_text).collect();
    extra.extend(g.value_info.iter().map(value_info_text));
    if !extra.is_empty() {
        let _ = write!(s, "\n{pad}<{}>", extra.join(", "));
    }
    let _ = write!(s, "\n{}", node_block(&g.node, indent));
    s
}

pub(crate) fn graph_text(g: &GraphProto) -> String {
    let mut s = graph_body(g, 0);
    s.push('\n');
    s
}

fn function_text(f: &FunctionProto) -> String {
    let mut header = Vec::new();
    if let Some(d) = &f.domain {
        header.push(format!("domain: {}", quote(d)));
    }
    if !f.opset_import.is_empty() {
        header.push(format!("opset_import: {}", opset_list(&f.opset_import)));
    }
    if let Some(d) = &f.doc_string {
        header.push(format!("doc_string: {}", quote(d)));
    }
    if let Some(o) = &f.overload {
        header.push(format!("overload: {}", quote(o)));
    }
    let mut s = String::new();
    if !header.is_empty() {
        let _ = writeln!(s, "<{}>", header.join(", "));
    }
    s.push_str(&name(f.name.as_deref().unwrap_or("")));
    let mut attrs: Vec<String> = f.attribute.clone();
    attrs.extend(f.attribute_proto.iter().map(|a| attr_text(a, 2)));
    if !attrs.is_empty() {
        let _ = write!(s, " <{}>", attrs.join(", "));
    }
    // Typed inputs and outputs take the leading value infos, in order.
    let mut vis = f.value_info.iter().peekable();
    let mut io = |names: &[String]| -> Vec<String> {
        names
            .iter()
            .map(|n| match vis.peek() {
                Some(v) if v.name.as_deref() == Some(n.as_str()) && v.r#type.is_some() => {
                    value_info_text(vis.next().unwrap())
                }
                _ => vi_name(n),
            })
            .collect()
    };
    let ins = io(&f.input);
    let outs = io(&f.output);
    let rest: Vec<String> = vis.map(value_info_text).collect();
    let _ = write!(s, " ({}) => ({})", ins.join(", "), outs.join(", "));
    if !rest.is_empty() {
        let _ = write!(s, "\n<{}>", rest.join(", "));
    }
    let _ = writeln!(s, "\n{}", node_block(&f.node, 0));
    s
}

pub(crate) fn model(m: &ModelProto) -> String {
    let mut header = Vec::new();
    if let Some(v) = m.ir_version {
        header.push(format!("ir_version: {v}"));
    }
    if !m.opset_import.is_empty() {
        header.push(format!("opset_import: {}", opset_list(&m.opset_import)));
    }
    if let Some(v) = &m.producer_name {
        header.push(format!("producer_name: {}", quote(v)));
    }
    if let Some(v) = &m.producer_version {
        header.push(format!("producer_version: {}", quote(v)));
    }
    if let Some(v) = &m.domain {
        header.push(format!("domain: {}", quote(v)));
    }
    if let Some(v) = m.model_version {
        header.push(format!("model_version: {v}"));
    }
    if let Some(v) = &m.doc_string {
        header.push(format!("doc_string: {}", quote(v)));
    }
    if !m.metadata_props.is_empty() {
        header.push(format!(
            "metadata_props: {}",
            str_str_list(&m.metadata_props)
        ));
    }
    let mut s = String::new();
    if !header.is_empty() {
        let _ = writeln!(s, "<\n  {}\n>", header.join(",\n  "));
    }
    match &m.graph {
        Some(g) => s.push_str(&graph_text(g)),
        None => s.push_str(&graph_text(&GraphProto::default())),
    }
    for f in &m.functions {
        s.push('\n');
        s.push_str(&function_text(f));
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
        let n = t.name.as_deref().unwrap_or("");
        check(
            n.is_empty() || is_ident(n),
            "a tensor attribute name that is not an identifier",
        )?;
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
        check_graph(g, true)?;
    }
    for g in &a.graphs {
        check_graph(g, true)?;
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

fn check_graph(g: &GraphProto, nested: bool) -> Result<(), String> {
    let n = g.name.as_deref().ok_or("a graph without a name field")?;
    if nested {
        check(
            is_ident(n)
                && !is_type_keyword(n)
                && !matches!(n.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"),
            "a subgraph name that is not a plain identifier",
        )?;
    }
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
    check_graph(g, false)?;
    for f in &m.functions {
        check_function(f)?;
    }
    Ok(())
}
