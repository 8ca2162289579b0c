//! Recursive-descent parser for the ONNX text syntax.
//!
//! The parser works directly on the bytes of the text (all punctuation is
//! ASCII) and skips whitespace and `#` comments before every token. It
//! fills the protobuf messages the way `onnx.parser` does, including which
//! optional fields are explicitly set (for instance `NodeProto.domain` is
//! always set, to `""` for the default domain).

use super::SyntaxError;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_shape_proto::{dimension, Dimension};
use crate::proto::type_proto::{self, Value as TypeValue};
use crate::proto::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use crate::tensor::DataType;

type R<T> = Result<T, SyntaxError>;

/// The element type named `name` in the syntax (exact spelling only).
pub(crate) fn prim_type(name: &str) -> Option<DataType> {
    DataType::all().find(|d| d.name() == name)
}

/// Words that start a type where a type or a name may appear.
pub(crate) fn is_type_keyword(name: &str) -> bool {
    prim_type(name).is_some()
        || matches!(
            name,
            "seq" | "map" | "optional" | "sparse_tensor" | "opaque"
        )
}

pub(crate) fn is_ident(s: &str) -> bool {
    let mut chars = s.bytes();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The attribute type written after `name:`.
pub(crate) fn attr_type_from_name(name: &str) -> Option<AttributeType> {
    Some(match name {
        "int" => AttributeType::Int,
        "float" => AttributeType::Float,
        "string" => AttributeType::String,
        "tensor" => AttributeType::Tensor,
        "graph" => AttributeType::Graph,
        "sparse_tensor" => AttributeType::SparseTensor,
        "type_proto" => AttributeType::TypeProto,
        "ints" => AttributeType::Ints,
        "floats" => AttributeType::Floats,
        "strings" => AttributeType::Strings,
        "tensors" => AttributeType::Tensors,
        "graphs" => AttributeType::Graphs,
        "sparse_tensors" => AttributeType::SparseTensors,
        "type_protos" => AttributeType::TypeProtos,
        _ => return None,
    })
}

fn is_nan_or_inf_word(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l == "nan" || l == "inf" || l == "infinity"
}

/// A literal constant, kept as text until its target type is known.
#[derive(Clone, Debug)]
enum Lit {
    Int(String),
    Float(String),
    Str(Vec<u8>),
}

/// One attribute value before it is stored in the AttributeProto.
enum Single {
    Lit(Lit),
    Tensor(TensorProto),
    Graph(GraphProto),
    Type(TypeProto),
}

impl Single {
    fn kind(&self) -> AttributeType {
        match self {
            Single::Lit(Lit::Int(_)) => AttributeType::Int,
            Single::Lit(Lit::Float(_)) => AttributeType::Float,
            Single::Lit(Lit::Str(_)) => AttributeType::String,
            Single::Tensor(_) => AttributeType::Tensor,
            Single::Graph(_) => AttributeType::Graph,
            Single::Type(_) => AttributeType::TypeProto,
        }
    }
}

fn list_of(t: AttributeType) -> AttributeType {
    match t {
        AttributeType::Int => AttributeType::Ints,
        AttributeType::Float => AttributeType::Floats,
        AttributeType::String => AttributeType::Strings,
        AttributeType::Tensor => AttributeType::Tensors,
        AttributeType::Graph => AttributeType::Graphs,
        AttributeType::SparseTensor => AttributeType::SparseTensors,
        AttributeType::TypeProto => AttributeType::TypeProtos,
        other => other,
    }
}

fn elem_of(t: AttributeType) -> Option<AttributeType> {
    Some(match t {
        AttributeType::Ints => AttributeType::Int,
        AttributeType::Floats => AttributeType::Float,
        AttributeType::Strings => AttributeType::String,
        AttributeType::Tensors => AttributeType::Tensor,
        AttributeType::Graphs => AttributeType::Graph,
        AttributeType::SparseTensors => AttributeType::SparseTensor,
        AttributeType::TypeProtos => AttributeType::TypeProto,
        _ => return None,
    })
}

pub(crate) fn attr_type_name(t: AttributeType) -> &'static str {
    match t {
        AttributeType::Undefined => "undefined",
        AttributeType::Int => "int",
        AttributeType::Float => "float",
        AttributeType::String => "string",
        AttributeType::Tensor => "tensor",
        AttributeType::Graph => "graph",
        AttributeType::SparseTensor => "sparse_tensor",
        AttributeType::TypeProto => "type_proto",
        AttributeType::Ints => "ints",
        AttributeType::Floats => "floats",
        AttributeType::Strings => "strings",
        AttributeType::Tensors => "tensors",
        AttributeType::Graphs => "graphs",
        AttributeType::SparseTensors => "sparse_tensors",
        AttributeType::TypeProtos => "type_protos",
    }
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Nesting limit for graphs and types, so hostile input cannot overflow the stack.
const MAX_DEPTH: usize = 32;

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            depth: 0,
        }
    }

    // ----- errors -------------------------------------------------------

    fn err_at(&self, pos: usize, message: impl Into<String>) -> SyntaxError {
        let pos = pos.min(self.src.len());
        let line_start = self.src[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line_end = self.src[pos..]
            .find('\n')
            .map(|i| pos + i)
            .unwrap_or(self.src.len());
        let line = self.src[..line_start].matches('\n').count() + 1;
        let col = self.src[line_start..pos].chars().count() + 1;
        SyntaxError {
            line,
            col,
            line_text: self.src[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
            message: message.into(),
        }
    }

    fn err(&mut self, message: impl Into<String>) -> SyntaxError {
        self.skip_ws();
        self.err_at(self.pos, message)
    }

    /// "expected X" with a description of what was found instead.
    fn expected(&mut self, what: &str) -> SyntaxError {
        self.skip_ws();
        let found = self.describe_here();
        self.err_at(self.pos, format!("expected {what}, found {found}"))
    }

    fn describe_here(&self) -> String {
        if self.pos >= self.b.len() {
            return "the end of the text".to_string();
        }
        let rest = &self.src[self.pos..];
        let c = rest.chars().next().unwrap_or(' ');
        if c.is_ascii_alphanumeric() || c == '_' {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                .take(40)
                .collect();
            format!("'{word}'")
        } else if c == '"' {
            "a string".to_string()
        } else {
            format!("'{c}'")
        }
    }

    // ----- lexical helpers ----------------------------------------------

    fn skip_ws(&mut self) {
        while self.pos < self.b.len() {
            match self.b[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' => self.pos += 1,
                b'#' => {
                    while self.pos < self.b.len() && self.b[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.b.get(self.pos).copied()
    }

    fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8, context: &str) -> R<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{}' {}", c as char, context)))
        }
    }

    fn eat_arrow(&mut self) -> bool {
        self.skip_ws();
        if self.b[self.pos..].starts_with(b"=>") {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    fn peek_ident(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let b = self.b;
        if start < b.len() && (b[start].is_ascii_alphabetic() || b[start] == b'_') {
            let mut end = start + 1;
            while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
                end += 1;
            }
            Some(&self.src[start..end])
        } else {
            None
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        let id = self.peek_ident()?;
        self.pos += id.len();
        Some(id)
    }

    fn expect_ident(&mut self, what: &str) -> R<&'a str> {
        match self.ident() {
            Some(id) => Ok(id),
            None => Err(self.expected(what)),
        }
    }

    /// A double-quoted string; a backslash takes the next character literally.
    fn string_bytes(&mut self) -> R<Vec<u8>> {
        self.skip_ws();
        let open = self.pos;
        if self.b.get(open) != Some(&b'"') {
            return Err(self.expected("a string"));
        }
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.b.get(self.pos) {
                None => return Err(self.err_at(open, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.b.get(self.pos) {
                        None => return Err(self.err_at(open, "unterminated string")),
                        Some(&c) => {
                            out.push(c);
                            self.pos += 1;
                        }
                    }
                }
                Some(&c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn string(&mut self) -> R<String> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.string_bytes()?;
        // The source is UTF-8 and escapes only drop ASCII backslashes, so
        // the content is UTF-8 too; checked anyway.
        String::from_utf8(bytes).map_err(|_| self.err_at(start, "invalid UTF-8 in string"))
    }

    /// An identifier or a quoted string.
    fn quotable_id(&mut self, what: &str) -> R<String> {
        match self.peek() {
            Some(b'"') => self.string(),
            _ => match self.ident() {
                Some(id) => Ok(id.to_string()),
                None => Err(self.expected(what)),
            },
        }
    }

    /// `ident ('.' ident)*`
    fn qualified_id(&mut self, what: &str) -> R<String> {
        let mut s = self.expect_ident(what)?.to_string();
        while self.peek() == Some(b'.') {
            self.pos += 1;
            s.push('.');
            s.push_str(self.expect_ident("a name after '.'")?);
        }
        Ok(s)
    }

    /// A number: `-? digits ('.' digits*)? ([eE] [+-]? digits)?`, or
    /// `nan`/`inf`/`infinity` (any case, optionally negated).
    fn number(&mut self) -> R<Option<Lit>> {
        self.skip_ws();
        let start = self.pos;
        let b = self.b;
        let mut p = start;
        if b.get(p) == Some(&b'-') {
            p += 1;
        }
        if p < b.len() && (b[p].is_ascii_alphabetic()) {
            let save = self.pos;
            self.pos = p;
            if let Some(word) = self.peek_ident() {
                if self.pos == p && is_nan_or_inf_word(word) {
                    self.pos = p + word.len();
                    return Ok(Some(Lit::Float(self.src[start..self.pos].to_string())));
                }
            }
            self.pos = save;
            if p > start {
                return Err(self.err_at(start, "expected a number after '-'"));
            }
            return Ok(None);
        }
        if p >= b.len() || !b[p].is_ascii_digit() {
            if p > start {
                return Err(self.err_at(start, "expected a number after '-'"));
            }
            return Ok(None);
        }
        while p < b.len() && b[p].is_ascii_digit() {
            p += 1;
        }
        let mut is_float = false;
        if p < b.len() && b[p] == b'.' {
            is_float = true;
            p += 1;
            while p < b.len() && b[p].is_ascii_digit() {
                p += 1;
            }
        }
        if p < b.len() && (b[p] == b'e' || b[p] == b'E') {
            let mut q = p + 1;
            if q < b.len() && (b[q] == b'+' || b[q] == b'-') {
                q += 1;
            }
            if q < b.len() && b[q].is_ascii_digit() {
                is_float = true;
                while q < b.len() && b[q].is_ascii_digit() {
                    q += 1;
                }
                p = q;
            } else {
                return Err(self.err_at(start, "malformed number: missing exponent digits"));
            }
        }
        self.pos = p;
        let text = self.src[start..p].to_string();
        Ok(Some(if is_float {
            Lit::Float(text)
        } else {
            Lit::Int(text)
        }))
    }

    /// A number or a string constant.
    fn literal(&mut self) -> R<Option<Lit>> {
        if self.peek() == Some(b'"') {
            return Ok(Some(Lit::Str(self.string_bytes()?)));
        }
        self.number()
    }

    fn int_value(&mut self, what: &str) -> R<i64> {
        self.skip_ws();
        let start = self.pos;
        match self.number()? {
            Some(Lit::Int(t)) => self.to_i64(start, &t),
            _ => {
                self.pos = start;
                Err(self.expected(what))
            }
        }
    }

    fn to_i64(&self, pos: usize, t: &str) -> R<i64> {
        t.parse::<i64>()
            .map_err(|_| self.err_at(pos, format!("integer {t} is out of the int64 range")))
    }

    fn to_f32(&self, pos: usize, t: &str) -> R<f32> {
        match t.parse::<f32>() {
            Ok(v) if v.is_infinite() && !t.to_ascii_lowercase().contains("inf") => {
                Err(self.err_at(pos, format!("number {t} is out of the float range")))
            }
            Ok(v) => Ok(v),
            Err(_) => Err(self.err_at(pos, format!("invalid number {t}"))),
        }
    }

    fn to_f64(&self, pos: usize, t: &str) -> R<f64> {
        match t.parse::<f64>() {
            Ok(v) if v.is_infinite() && !t.to_ascii_lowercase().contains("inf") => {
                Err(self.err_at(pos, format!("number {t} is out of the double range")))
            }
            Ok(v) => Ok(v),
            Err(_) => Err(self.err_at(pos, format!("invalid number {t}"))),
        }
    }

    // ----- types ----------------------------------------------------------

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nesting is too deep"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn prim(&mut self) -> R<DataType> {
        self.skip_ws();
        let start = self.pos;
        match self.ident() {
            Some(id) => match prim_type(id) {
                Some(d) => Ok(d),
                None => Err(self.err_at(start, format!("unknown element type '{id}'"))),
            },
            None => Err(self.expected("an element type")),
        }
    }

    /// After the element type: nothing (a scalar), `[]` (unknown rank) or `[dims]`.
    fn shape_suffix(&mut self) -> R<Option<TensorShapeProto>> {
        if !self.eat(b'[') {
            return Ok(Some(TensorShapeProto { dim: vec![] }));
        }
        if self.eat(b']') {
            return Ok(None);
        }
        let mut dims = Vec::new();
        loop {
            let value = match self.peek() {
                Some(b'?') => {
                    self.pos += 1;
                    None
                }
                Some(b'"') => Some(dimension::Value::DimParam(self.string()?)),
                Some(c) if c == b'-' || c.is_ascii_digit() => {
                    Some(dimension::Value::DimValue(self.int_value("a dimension")?))
                }
                _ => match self.ident() {
                    Some(id) => Some(dimension::Value::DimParam(id.to_string())),
                    None => return Err(self.expected("a dimension ('?', a number or a name)")),
                },
            };
            dims.push(Dimension {
                denotation: None,
                value,
            });
            if self.eat(b',') {
                continue;
            }
            self.expect(b']', "after the dimensions")?;
            return Ok(Some(TensorShapeProto { dim: dims }));
        }
    }

    fn tensor_type(&mut self) -> R<(DataType, Option<TensorShapeProto>)> {
        let d = self.prim()?;
        let shape = self.shape_suffix()?;
        Ok((d, shape))
    }

    fn type_proto(&mut self) -> R<TypeProto> {
        self.enter()?;
        let r = self.type_inner();
        self.leave();
        r
    }

    fn type_inner(&mut self) -> R<TypeProto> {
        self.skip_ws();
        let start = self.pos;
        let Some(word) = self.peek_ident() else {
            return Err(self.expected("a type"));
        };
        let value = match word {
            "seq" | "optional" => {
                self.pos += word.len();
                self.expect(b'(', &format!("after '{word}'"))?;
                let inner = self.type_proto()?;
                self.expect(b')', &format!("to close '{word}('"))?;
                if word == "seq" {
                    TypeValue::SequenceType(Box::new(type_proto::Sequence {
                        elem_type: Some(Box::new(inner)),
                    }))
                } else {
                    TypeValue::OptionalType(Box::new(type_proto::Optional {
                        elem_type: Some(Box::new(inner)),
                    }))
                }
            }
            "map" => {
                self.pos += word.len();
                self.expect(b'(', "after 'map'")?;
                let key = self.prim()?;
                self.expect(b',', "after the map key type")?;
                let value = self.type_proto()?;
                self.expect(b')', "to close 'map('")?;
                TypeValue::MapType(Box::new(type_proto::Map {
                    key_type: Some(key.code()),
                    value_type: Some(Box::new(value)),
                }))
            }
            "sparse_tensor" => {
                self.pos += word.len();
                self.expect(b'(', "after 'sparse_tensor'")?;
                let (d, shape) = self.tensor_type()?;
                self.expect(b')', "to close 'sparse_tensor('")?;
                TypeValue::SparseTensorType(type_proto::SparseTensor {
                    elem_type: Some(d.code()),
                    shape,
                })
            }
            "opaque" => {
                self.pos += word.len();
                self.expect(b'(', "after 'opaque'")?;
                let mut o = type_proto::Opaque::default();
                if !self.eat(b')') {
                    let first = self.qualified_id("an opaque type name")?;
                    if self.eat(b',') {
                        o.domain = Some(first);
                        o.name = Some(self.expect_ident("an opaque type name")?.to_string());
                    } else {
                        o.name = Some(first);
                    }
                    self.expect(b')', "to close 'opaque('")?;
                }
                TypeValue::OpaqueType(o)
            }
            _ => {
                if prim_type(word).is_none() {
                    return Err(self.err_at(start, format!("unknown element type '{word}'")));
                }
                let (d, shape) = self.tensor_type()?;
                TypeValue::TensorType(type_proto::Tensor {
                    elem_type: Some(d.code()),
                    shape,
                })
            }
        };
        Ok(TypeProto {
            denotation: None,
            value: Some(value),
        })
    }

    // ----- tensor constants -------------------------------------------------

    /// A tensor of `d` with `dims` from `{ constants }`.
    fn tensor_data(&mut self, t: &mut TensorProto, d: DataType) -> R<()> {
        self.expect(b'{', "to start the tensor values")?;
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            self.skip_ws();
            let start = self.pos;
            let lit = match self.literal()? {
                Some(l) => l,
                None => return Err(self.expected("a constant")),
            };
            self.store_elem(t, d, start, lit)?;
            if self.eat(b',') {
                continue;
            }
            self.expect(b'}', "after the tensor values")?;
            return Ok(());
        }
    }

    fn store_elem(&mut self, t: &mut TensorProto, d: DataType, pos: usize, lit: Lit) -> R<()> {
        use DataType as D;
        let kind = match &lit {
            Lit::Int(_) => "an integer",
            Lit::Float(_) => "a floating-point number",
            Lit::Str(_) => "a string",
        };
        let mismatch = |p: &Self, want: &str| {
            p.err_at(
                pos,
                format!("expected {want} in a {} tensor, found {kind}", d.name()),
            )
        };
        match d {
            D::Float | D::Complex64 => match lit {
                Lit::Int(s) | Lit::Float(s) => t.float_data.push(self.to_f32(pos, &s)?),
                Lit::Str(_) => return Err(mismatch(self, "a number")),
            },
            D::Double | D::Complex128 => match lit {
                Lit::Int(s) | Lit::Float(s) => t.double_data.push(self.to_f64(pos, &s)?),
                Lit::Str(_) => return Err(mismatch(self, "a number")),
            },
            D::String => match lit {
                Lit::Str(s) => t.string_data.push(s),
                _ => return Err(mismatch(self, "a string")),
            },
            D::Int64 => match lit {
                Lit::Int(s) => t.int64_data.push(self.to_i64(pos, &s)?),
                _ => return Err(mismatch(self, "an integer")),
            },
            D::Uint32 | D::Uint64 => match lit {
                Lit::Int(s) => {
                    let v = if s.starts_with('-') {
                        self.to_i64(pos, &s)? as u64
                    } else {
                        s.parse::<u64>().map_err(|_| {
                            self.err_at(pos, format!("integer {s} is out of the uint64 range"))
                        })?
                    };
                    t.uint64_data.push(v);
                }
                _ => return Err(mismatch(self, "an integer")),
            },
            D::Undefined => return Err(self.err_at(pos, "a tensor needs an element type")),
            _ => match lit {
                Lit::Int(s) => {
                    let v = self.to_i64(pos, &s)?;
                    let v = i32::try_from(v).map_err(|_| {
                        self.err_at(pos, format!("integer {s} is out of the int32 range"))
                    })?;
                    t.int32_data.push(v);
                }
                _ => return Err(mismatch(self, "an integer")),
            },
        }
        Ok(())
    }

    /// `["key": "value", ...]`
    fn str_str_list(&mut self) -> R<Vec<StringStringEntryProto>> {
        self.expect(b'[', "to start a key-value list")?;
        let mut out = Vec::new();
        if self.eat(b']') {
            return Ok(out);
        }
        loop {
            let key = self.string()?;
            self.expect(b':', "after the key")?;
            let value = self.string()?;
            out.push(StringStringEntryProto {
                key: Some(key),
                value: Some(value),
            });
            if self.eat(b',') {
                continue;
            }
            self.expect(b']', "after the key-value list")?;
            return Ok(out);
        }
    }

    /// A tensor with data type and dims from `ty`, for an initializer.
    fn tensor_of_type(
        &mut self,
        pos: usize,
        ty: &TypeProto,
        name: &str,
    ) -> R<(TensorProto, DataType)> {
        let Some(TypeValue::TensorType(tt)) = &ty.value else {
            return Err(self.err_at(pos, "an initializer needs a tensor type"));
        };
        let d = DataType::from_code(tt.elem_type.unwrap_or(0)).unwrap_or(DataType::Undefined);
        let Some(shape) = &tt.shape else {
            return Err(self.err_at(
                pos,
                "an initializer needs a tensor shape: write 'float' for a scalar or 'float[2,3]'",
            ));
        };
        let mut dims = Vec::new();
        for dim in &shape.dim {
            match dim.value {
                Some(dimension::Value::DimValue(v)) => dims.push(v),
                _ => {
                    return Err(self.err_at(pos, "an initializer's dimensions must be numbers"));
                }
            }
        }
        Ok((
            TensorProto {
                dims,
                data_type: Some(d.code()),
                name: Some(name.to_string()),
                ..Default::default()
            },
            d,
        ))
    }

    // ----- value infos ----------------------------------------------------------

    /// `type? name ('=' constant-data)?`; the type is required when
    /// `typed` is true; the initializer is allowed when `init` is true.
    fn value_info_or_init(
        &mut self,
        typed: bool,
        init: bool,
    ) -> R<(ValueInfoProto, Option<TensorProto>)> {
        self.skip_ws();
        let start = self.pos;
        let ty = match self.peek_ident() {
            Some(w) if is_type_keyword(w) => Some(self.type_proto()?),
            Some(w) => {
                // `flaot x`: a word followed by a name is a misspelt type.
                let save = self.pos;
                self.pos += w.len();
                let next = self.peek();
                self.pos = save;
                if matches!(next, Some(c) if c == b'"' || c == b'_' || c == b'[' || c == b'(' || c.is_ascii_alphabetic())
                {
                    return Err(self.err_at(start, format!("unknown element type '{w}'")));
                }
                if typed {
                    return Err(self.expected("a type before the name"));
                }
                None
            }
            None if typed => return Err(self.expected("a type")),
            None => None,
        };
        let name = self.quotable_id("a value name")?;
        let vi = ValueInfoProto {
            name: Some(name.clone()),
            r#type: ty.clone(),
            ..Default::default()
        };
        if init && self.peek() == Some(b'=') {
            self.pos += 1;
            let Some(ty) = &ty else {
                return Err(self.err_at(start, "an initializer needs a type"));
            };
            let (mut t, d) = self.tensor_of_type(start, ty, &name)?;
            match self.peek() {
                Some(b'[') => {
                    t.external_data = self.str_str_list()?;
                    t.data_location =
                        Some(crate::proto::tensor_proto::DataLocation::External as i32);
                }
                Some(b'{') => self.tensor_data(&mut t, d)?,
                _ => return Err(self.expected("'{' with tensor values or '[' with external data")),
            }
            return Ok((vi, Some(t)));
        }
        Ok((vi, None))
    }

    // ----- graphs ------------------------------------------------------------------

    pub(crate) fn whole_graph(&mut self) -> R<GraphProto> {
        let g = self.graph()?;
        if !self.at_end() {
            return Err(self.expected("the end of the text after the graph"));
        }
        Ok(g)
    }

    fn graph(&mut self) -> R<GraphProto> {
        self.enter()?;
        let r = self.graph_inner();
        self.leave();
        r
    }

    fn graph_inner(&mut self) -> R<GraphProto> {
        let mut g = GraphProto {
            name: Some(self.quotable_id("a graph name")?),
            ..Default::default()
        };
        self.expect(b'(', "to start the graph inputs")?;
        if !self.eat(b')') {
            loop {
                let (vi, t) = self.value_info_or_init(false, true)?;
                g.input.push(vi);
                g.initializer.extend(t);
                if self.eat(b',') {
                    continue;
                }
                self.expect(b')', "after the graph inputs")?;
                break;
            }
        }
        if !self.eat_arrow() {
            return Err(self.expected("'=>' after the graph inputs"));
        }
        self.expect(b'(', "to start the graph outputs")?;
        if !self.eat(b')') {
            loop {
                let (vi, _) = self.value_info_or_init(false, false)?;
                g.output.push(vi);
                if self.eat(b',') {
                    continue;
                }
                self.expect(b')', "after the graph outputs")?;
                break;
            }
        }
        if self.eat(b'<') && !self.eat(b'>') {
            loop {
                let (vi, t) = self.value_info_or_init(true, true)?;
                match t {
                    Some(t) => g.initializer.push(t),
                    None => g.value_info.push(vi),
                }
                if self.eat(b',') {
                    continue;
                }
                self.expect(b'>', "after the initializers and value infos")?;
                break;
            }
        }
        g.node = self.node_list()?;
        Ok(g)
    }

    fn node_list(&mut self) -> R<Vec<NodeProto>> {
        self.expect(b'{', "to start the node list")?;
        let mut nodes = Vec::new();
        loop {
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(nodes);
                }
                None => return Err(self.expected("'}' to close the node list")),
                _ => nodes.push(self.node()?),
            }
        }
    }

    /// Names separated by commas up to `end`; a slot may be empty (an
    /// omitted optional value), except the one after a trailing comma.
    fn name_list(&mut self, end: u8, what: &str) -> R<Vec<String>> {
        let mut names = Vec::new();
        loop {
            if self.peek() == Some(end) {
                return Ok(names);
            }
            match self.peek() {
                Some(b',') => names.push(String::new()),
                _ => names.push(self.quotable_id(what)?),
            }
            if !self.eat(b',') {
                return Ok(names);
            }
        }
    }

    fn node(&mut self) -> R<NodeProto> {
        let mut n = NodeProto::default();
        if self.eat(b'[') {
            n.name = Some(if self.peek() == Some(b']') {
                String::new()
            } else {
                self.quotable_id("a node name")?
            });
            self.expect(b']', "after the node name")?;
        }
        n.output = self.name_list(b'=', "an output name")?;
        if !self.eat(b'=') {
            return Err(self.expected("'=' after the output names"));
        }
        let op = self.qualified_id("an operator name")?;
        match op.rfind('.') {
            Some(i) => {
                n.domain = Some(op[..i].to_string());
                n.op_type = Some(op[i + 1..].to_string());
            }
            None => {
                n.domain = Some(String::new());
                n.op_type = Some(op);
            }
        }
        let mut has_attrs = false;
        if self.peek() == Some(b'<') {
            n.attribute = self.attr_list()?;
            has_attrs = true;
        }
        self.expect(b'(', "before the node inputs")?;
        n.input = self.name_list(b')', "an input name")?;
        self.expect(b')', "after the node inputs")?;
        if self.peek() == Some(b'<') {
            if has_attrs {
                return Err(self.err("attributes are given both before and after the inputs"));
            }
            n.attribute = self.attr_list()?;
        }
        Ok(n)
    }

    fn attr_list(&mut self) -> R<Vec<AttributeProto>> {
        self.expect(b'<', "to start the attributes")?;
        let mut attrs = Vec::new();
        loop {
            attrs.push(self.attr()?);
            if self.eat(b',') {
                continue;
            }
            self.expect(b'>', "after the attributes")?;
            return Ok(attrs);
        }
    }

    fn declared_type(&mut self) -> R<Option<AttributeType>> {
        if !self.eat(b':') {
            return Ok(None);
        }
        self.skip_ws();
        let start = self.pos;
        let name = self.expect_ident("an attribute type after ':'")?;
        match attr_type_from_name(name) {
            Some(t) => Ok(Some(t)),
            None => Err(self.err_at(start, format!("unknown attribute type '{name}'"))),
        }
    }

    fn attr(&mut self) -> R<AttributeProto> {
        let name = self.expect_ident("an attribute name")?.to_string();
        let declared = self.declared_type()?;
        if !self.eat(b'=') {
            return Err(self.expected(&format!("'=' after the attribute name '{name}'")));
        }
        self.attr_value(name, declared)
    }

    fn attr_value(&mut self, name: String, declared: Option<AttributeType>) -> R<AttributeProto> {
        let mut a = AttributeProto {
            name: Some(name),
            ..Default::default()
        };
        if self.eat(b'@') {
            a.ref_attr_name = Some(
                self.expect_ident("an attribute name after '@'")?
                    .to_string(),
            );
            a.r#type = declared.map(|t| t as i32);
            return Ok(a);
        }
        if self.peek() == Some(b'[') {
            let open = self.pos;
            self.pos += 1;
            let mut items = Vec::new();
            if !self.eat(b']') {
                loop {
                    self.skip_ws();
                    let p = self.pos;
                    items.push((p, self.single_value()?));
                    if self.eat(b',') {
                        continue;
                    }
                    self.expect(b']', "after the list")?;
                    break;
                }
            }
            let list_type = match declared {
                Some(d) => match elem_of(d) {
                    Some(_) => d,
                    None => {
                        return Err(self.err_at(
                            open,
                            format!(
                                "a list value does not fit the declared type '{}'",
                                attr_type_name(d)
                            ),
                        ))
                    }
                },
                None => match items.first() {
                    Some((_, v)) => list_of(v.kind()),
                    None => {
                        return Err(self.err_at(
                            open,
                            "an empty list needs a type annotation, e.g. 'axes: ints = []'",
                        ))
                    }
                },
            };
            let elem = elem_of(list_type).unwrap_or(AttributeType::Undefined);
            for (p, v) in items {
                self.store_attr(&mut a, elem, p, v, true)?;
            }
            a.r#type = Some(list_type as i32);
            return Ok(a);
        }
        self.skip_ws();
        let p = self.pos;
        let v = self.single_value()?;
        let t = match declared {
            Some(d) => d,
            None => v.kind(),
        };
        if elem_of(t).is_some() {
            return Err(self.err_at(
                p,
                format!(
                    "the declared type '{}' needs a list value '[...]'",
                    attr_type_name(t)
                ),
            ));
        }
        self.store_attr(&mut a, t, p, v, false)?;
        a.r#type = Some(t as i32);
        Ok(a)
    }

    fn store_attr(
        &mut self,
        a: &mut AttributeProto,
        want: AttributeType,
        pos: usize,
        v: Single,
        list: bool,
    ) -> R<()> {
        let have = v.kind();
        let mismatch = |p: &Self| {
            p.err_at(
                pos,
                format!(
                    "expected a value of type {}, found a value of type {}",
                    attr_type_name(want),
                    attr_type_name(have)
                ),
            )
        };
        match (want, v) {
            (AttributeType::Int, Single::Lit(Lit::Int(s))) => {
                let v = self.to_i64(pos, &s)?;
                if list {
                    a.ints.push(v)
                } else {
                    a.i = Some(v)
                }
            }
            (AttributeType::Float, Single::Lit(Lit::Int(s) | Lit::Float(s))) => {
                let v = self.to_f32(pos, &s)?;
                if list {
                    a.floats.push(v)
                } else {
                    a.f = Some(v)
                }
            }
            (AttributeType::String, Single::Lit(Lit::Str(s))) => {
                if list {
                    a.strings.push(s)
                } else {
                    a.s = Some(s)
                }
            }
            (AttributeType::Tensor, Single::Tensor(t)) => {
                if list {
                    a.tensors.push(t)
                } else {
                    a.t = Some(t)
                }
            }
            (AttributeType::Graph, Single::Graph(g)) => {
                if list {
                    a.graphs.push(g)
                } else {
                    a.g = Some(g)
                }
            }
            (AttributeType::TypeProto, Single::Type(t)) => {
                if list {
                    a.type_protos.push(t)
                } else {
                    a.tp = Some(t)
                }
            }
            (AttributeType::SparseTensor, _) => {
                return Err(self.err_at(
                    pos,
                    "sparse tensor values cannot be written in the text syntax (only '@ref')",
                ))
            }
            _ => return Err(mismatch(self)),
        }
        Ok(())
    }

    /// One attribute value: a constant, a tensor, a type or a graph.
    fn single_value(&mut self) -> R<Single> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() == Some(b'"') {
            // `"name" (` starts a graph whose name needs quotes; any other
            // string is a string value
            let _ = self.string_bytes();
            let graph = self.peek() == Some(b'(');
            self.pos = start;
            if graph {
                return Ok(Single::Graph(self.graph()?));
            }
        }
        if let Some(lit) = self.literal()? {
            return Ok(Single::Lit(lit));
        }
        let Some(word) = self.peek_ident() else {
            return Err(self.expected("an attribute value"));
        };
        if let Some(d) = prim_type(word) {
            let ty = self.type_proto()?;
            let tensor_follows = match self.peek() {
                Some(b'{') | Some(b'=') | Some(b'"') => true,
                Some(c) if c == b'_' || c.is_ascii_alphabetic() => true,
                _ => false,
            };
            if !tensor_follows {
                return Ok(Single::Type(ty));
            }
            let name = match self.peek() {
                Some(b'"') => self.string()?,
                _ => self.ident().unwrap_or("").to_string(),
            };
            self.eat(b'=');
            let (mut t, _) = self.tensor_of_type(start, &ty, &name)?;
            self.tensor_data(&mut t, d)?;
            return Ok(Single::Tensor(t));
        }
        if is_type_keyword(word) {
            return Ok(Single::Type(self.type_proto()?));
        }
        Ok(Single::Graph(self.graph()?))
    }

    // ----- model and functions -------------------------------------------------------

    fn opset_list(&mut self) -> R<Vec<OperatorSetIdProto>> {
        self.expect(b'[', "to start the opset list")?;
        let mut out = Vec::new();
        if self.eat(b']') {
            return Ok(out);
        }
        loop {
            let domain = self.string()?;
            self.expect(b':', "after the opset domain")?;
            let version = self.int_value("an opset version")?;
            out.push(OperatorSetIdProto {
                domain: Some(domain),
                version: Some(version),
            });
            if self.eat(b',') {
                continue;
            }
            self.expect(b']', "after the opset list")?;
            return Ok(out);
        }
    }

    pub(crate) fn model(&mut self) -> R<ModelProto> {
        let mut m = ModelProto::default();
        if self.eat(b'<') {
            loop {
                self.skip_ws();
                let kpos = self.pos;
                let key = self.expect_ident("a model header key")?;
                self.expect(b':', &format!("after '{key}'"))?;
                match key {
                    "ir_version" => m.ir_version = Some(self.int_value("an integer")?),
                    "model_version" => m.model_version = Some(self.int_value("an integer")?),
                    "opset_import" => m.opset_import.extend(self.opset_list()?),
                    "producer_name" => m.producer_name = Some(self.string()?),
                    "producer_version" => m.producer_version = Some(self.string()?),
                    "domain" => m.domain = Some(self.string()?),
                    "doc_string" => m.doc_string = Some(self.string()?),
                    "metadata_props" => m.metadata_props.extend(self.str_str_list()?),
                    _ => {
                        return Err(self.err_at(
                            kpos,
                            format!("unknown model header key '{key}' (expected ir_version, opset_import, producer_name, producer_version, domain, model_version, doc_string or metadata_props)"),
                        ))
                    }
                }
                if self.eat(b',') {
                    continue;
                }
                self.expect(b'>', "after the model header")?;
                break;
            }
        }
        m.graph = Some(self.graph()?);
        while !self.at_end() {
            match self.peek() {
                Some(b'<') | Some(b'"') => {}
                Some(c) if c == b'_' || c.is_ascii_alphabetic() => {}
                _ => return Err(self.expected("a function or the end of the text")),
            }
            m.functions.push(self.function()?);
        }
        Ok(m)
    }

    fn function(&mut self) -> R<FunctionProto> {
        let mut f = FunctionProto::default();
        if self.eat(b'<') {
            loop {
                self.skip_ws();
                let kpos = self.pos;
                let key = self.expect_ident("a function header key")?;
                self.expect(b':', &format!("after '{key}'"))?;
                match key {
                    "domain" => f.domain = Some(self.string()?),
                    "opset_import" => f.opset_import.extend(self.opset_list()?),
                    "doc_string" => f.doc_string = Some(self.string()?),
                    "overload" => f.overload = Some(self.string()?),
                    _ => {
                        return Err(self.err_at(
                            kpos,
                            format!("unknown function header key '{key}' (expected domain, opset_import, doc_string or overload)"),
                        ))
                    }
                }
                if self.eat(b',') {
                    continue;
                }
                self.expect(b'>', "after the function header")?;
                break;
            }
        }
        f.name = Some(self.quotable_id("a function name")?);
        if self.eat(b'<') {
            loop {
                let name = self.expect_ident("an attribute name")?.to_string();
                match self.peek() {
                    Some(b':') | Some(b'=') => {
                        let declared = self.declared_type()?;
                        if !self.eat(b'=') {
                            return Err(self.expected(&format!(
                                "'=' and a default value after the attribute '{name}'"
                            )));
                        }
                        f.attribute_proto.push(self.attr_value(name, declared)?);
                    }
                    _ => f.attribute.push(name),
                }
                if self.eat(b',') {
                    continue;
                }
                self.expect(b'>', "after the function attributes")?;
                break;
            }
        }
        let mut typed = Vec::new();
        self.expect(b'(', "to start the function inputs")?;
        if !self.eat(b')') {
            loop {
                let (vi, _) = self.value_info_or_init(false, false)?;
                f.input.push(vi.name.clone().unwrap_or_default());
                if vi.r#type.is_some() {
                    typed.push(vi);
                }
                if self.eat(b',') {
                    continue;
                }
                self.expect(b')', "after the function inputs")?;
                break;
            }
        }
        if !self.eat_arrow() {
            return Err(self.expected("'=>' after the function inputs"));
        }
        self.expect(b'(', "to start the function outputs")?;
        if !self.eat(b')') {
            loop {
                let (vi, _) = self.value_info_or_init(false, false)?;
                f.output.push(vi.name.clone().unwrap_or_default());
                if vi.r#type.is_some() {
                    typed.push(vi);
                }
                if self.eat(b',') {
                    continue;
                }
                self.expect(b')', "after the function outputs")?;
                break;
            }
        }
        if self.eat(b'<') && !self.eat(b'>') {
            loop {
                let (vi, _) = self.value_info_or_init(true, false)?;
                typed.push(vi);
                if self.eat(b',') {
                    continue;
                }
                self.expect(b'>', "after the function value infos")?;
                break;
            }
        }
        f.value_info = typed;
        f.node = self.node_list()?;
        Ok(f)
    }
}
