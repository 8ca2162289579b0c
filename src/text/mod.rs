//! The ONNX text syntax (see `docs/Syntax.md` of the ONNX repository):
//! a parser producing the same protobuf messages as `onnx.parser`, a
//! canonical printer whose output parses back to an equal model, and a
//! line-per-fact pretty summary.

mod excerpt;
mod parse;
mod pretty;
mod print;

use crate::proto::{GraphProto, ModelProto, TypeProto};
use std::fmt;

pub use excerpt::caret_excerpt;
pub use print::expressible;

/// A syntax error: 1-based line and column, the offending line's text, what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub col: usize,
    pub line_text: String,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}:{}: {}\n{}",
            self.line,
            self.col,
            self.message,
            caret_excerpt(&self.line_text, self.col.saturating_sub(1))
        )
    }
}

impl std::error::Error for SyntaxError {}

/// Parses a model: an optional `<key: value, ...>` header, the main graph,
/// then zero or more functions. Without a header, `ir_version` and
/// `opset_import` stay unset, as with `onnx.parser.parse_model`.
pub fn parse_model(text: &str) -> Result<ModelProto, SyntaxError> {
    parse::Parser::new(text).model()
}

/// Parses a bare graph `name (inputs) => (outputs) <initializers> { nodes }`.
pub fn parse_graph(text: &str) -> Result<GraphProto, SyntaxError> {
    parse::Parser::new(text).whole_graph()
}

/// Canonical text of a model; `parse_model(&print_model(m))` gives back `m`
/// whenever [`expressible`] accepts `m`.
pub fn print_model(m: &ModelProto) -> String {
    print::model(m)
}

/// Canonical text of a graph, accepted by [`parse_graph`].
pub fn print_graph(g: &GraphProto) -> String {
    print::graph_text(g)
}

/// A type for display: `float[N,4]`, `float[]` (a scalar: known rank 0),
/// `float` (unknown rank), `seq(float[N])`, `optional(...)`,
/// `map(int64, float)`, `sparse_tensor(float[2,3])`, `opaque(domain, name)`.
///
/// Note that the text *syntax* writes the two tensor cases the other way
/// round (`float` is a scalar, `float[]` has an unknown rank, matching
/// `onnx.parser`); [`format_type_syntax`] gives that form, and the
/// canonical printer uses it.
pub fn format_type(t: &TypeProto) -> String {
    print::type_text(t, print::TypeStyle::Display)
}

/// A type exactly as the text syntax writes it (`float` scalar, `float[]`
/// unknown rank), so that parsing it gives back `t`.
pub fn format_type_syntax(t: &TypeProto) -> String {
    print::type_text(t, print::TypeStyle::Syntax)
}

/// A line-per-fact summary of a model: opsets, graph name, inputs,
/// initializers, numbered nodes, outputs, value infos, then functions.
pub fn pretty(m: &ModelProto) -> String {
    pretty::model(m)
}

/// Bytes of tensor values a model holds inline (raw or typed fields), in
/// its graphs, subgraphs, sparse tensors and functions: what its text would
/// have to spell out as numbers.
pub fn inline_tensor_bytes(m: &ModelProto) -> u64 {
    use crate::proto::{AttributeProto, NodeProto, SparseTensorProto, TensorProto};
    fn tensor(t: &TensorProto) -> u64 {
        let fields = t.float_data.len() * 4
            + t.int32_data.len() * 4
            + t.double_data.len() * 8
            + t.int64_data.len() * 8
            + t.uint64_data.len() * 8;
        let strings: usize = t.string_data.iter().map(Vec::len).sum();
        (fields + strings + t.raw_data.as_ref().map_or(0, |r| r.len())) as u64
    }
    fn sparse(s: &SparseTensorProto) -> u64 {
        s.values.as_ref().map_or(0, tensor) + s.indices.as_ref().map_or(0, tensor)
    }
    fn attr(a: &AttributeProto) -> u64 {
        a.t.as_ref().map_or(0, tensor)
            + a.tensors.iter().map(tensor).sum::<u64>()
            + a.sparse_tensor.as_ref().map_or(0, sparse)
            + a.sparse_tensors.iter().map(sparse).sum::<u64>()
            + a.g.as_ref().map_or(0, graph)
            + a.graphs.iter().map(graph).sum::<u64>()
    }
    fn nodes(ns: &[NodeProto]) -> u64 {
        ns.iter().flat_map(|n| &n.attribute).map(attr).sum()
    }
    fn graph(g: &GraphProto) -> u64 {
        g.initializer.iter().map(tensor).sum::<u64>()
            + g.sparse_initializer.iter().map(sparse).sum::<u64>()
            + nodes(&g.node)
    }
    m.graph.as_ref().map_or(0, graph)
        + m.functions
            .iter()
            .map(|f| nodes(&f.node) + f.attribute_proto.iter().map(attr).sum::<u64>())
            .sum::<u64>()
}

/// The most tensor bytes that `show --text` and `save PATH.txt` spell out
/// inline (about three times as many bytes of text); a larger model is
/// refused with a pointer to `--external-threshold`.
pub const MAX_INLINE_TEXT_BYTES: u64 = 256 << 20;

#[cfg(test)]
mod tests;
