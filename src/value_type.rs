//! The inferred type of a value, and conversion from and to `TypeProto`.

use crate::expr::Expr;
use crate::proto::tensor_shape_proto::{dimension, Dimension};
use crate::proto::type_proto::{self, Value as TV};
use crate::proto::{TensorShapeProto, TypeProto};
use crate::tensor::DataType;

/// One dimension: an expression (an integer is a constant expression), or
/// `None` when unknown.
pub type Dim = Option<Expr>;

/// The type of a value as inference knows it.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeInfo {
    /// A tensor; `shape` is `None` when even the rank is unknown.
    Tensor {
        elem: DataType,
        shape: Option<Vec<Dim>>,
    },
    Sequence(Box<TypeInfo>),
    Optional(Box<TypeInfo>),
    Map(DataType, Box<TypeInfo>),
    Unknown,
}

impl TypeInfo {
    pub fn tensor(elem: DataType, shape: Option<Vec<Dim>>) -> TypeInfo {
        TypeInfo::Tensor { elem, shape }
    }

    /// A tensor of known integer dimensions.
    pub fn fixed(elem: DataType, dims: &[i64]) -> TypeInfo {
        TypeInfo::Tensor {
            elem,
            shape: Some(dims.iter().map(|&d| Some(Expr::int(d))).collect()),
        }
    }

    pub fn elem(&self) -> Option<DataType> {
        match self {
            TypeInfo::Tensor { elem, .. } => Some(*elem),
            _ => None,
        }
    }

    pub fn shape(&self) -> Option<&[Dim]> {
        match self {
            TypeInfo::Tensor { shape, .. } => shape.as_deref(),
            _ => None,
        }
    }

    /// True when every dimension is known (tensors), recursively.
    pub fn is_complete(&self) -> bool {
        match self {
            TypeInfo::Tensor { shape, elem } => {
                *elem != DataType::Undefined
                    && shape
                        .as_ref()
                        .is_some_and(|s| s.iter().all(|d| d.is_some()))
            }
            TypeInfo::Sequence(t) | TypeInfo::Optional(t) | TypeInfo::Map(_, t) => t.is_complete(),
            TypeInfo::Unknown => false,
        }
    }

    pub fn from_proto(tp: &TypeProto) -> TypeInfo {
        match &tp.value {
            Some(TV::TensorType(t)) => TypeInfo::Tensor {
                elem: DataType::from_code(t.elem_type()).unwrap_or(DataType::Undefined),
                shape: t.shape.as_ref().map(dims_from_proto),
            },
            Some(TV::SparseTensorType(t)) => TypeInfo::Tensor {
                elem: DataType::from_code(t.elem_type()).unwrap_or(DataType::Undefined),
                shape: t.shape.as_ref().map(dims_from_proto),
            },
            Some(TV::SequenceType(s)) => TypeInfo::Sequence(Box::new(
                s.elem_type
                    .as_deref()
                    .map(TypeInfo::from_proto)
                    .unwrap_or(TypeInfo::Unknown),
            )),
            Some(TV::OptionalType(s)) => TypeInfo::Optional(Box::new(
                s.elem_type
                    .as_deref()
                    .map(TypeInfo::from_proto)
                    .unwrap_or(TypeInfo::Unknown),
            )),
            Some(TV::MapType(m)) => TypeInfo::Map(
                DataType::from_code(m.key_type()).unwrap_or(DataType::Undefined),
                Box::new(
                    m.value_type
                        .as_deref()
                        .map(TypeInfo::from_proto)
                        .unwrap_or(TypeInfo::Unknown),
                ),
            ),
            _ => TypeInfo::Unknown,
        }
    }

    pub fn to_proto(&self) -> TypeProto {
        let value = match self {
            TypeInfo::Tensor { elem, shape } => TV::TensorType(type_proto::Tensor {
                elem_type: Some(elem.code()),
                shape: shape.as_ref().map(|s| dims_to_proto(s)),
            }),
            TypeInfo::Sequence(t) => TV::SequenceType(Box::new(type_proto::Sequence {
                elem_type: Some(Box::new(t.to_proto())),
            })),
            TypeInfo::Optional(t) => TV::OptionalType(Box::new(type_proto::Optional {
                elem_type: Some(Box::new(t.to_proto())),
            })),
            TypeInfo::Map(k, v) => TV::MapType(Box::new(type_proto::Map {
                key_type: Some(k.code()),
                value_type: Some(Box::new(v.to_proto())),
            })),
            TypeInfo::Unknown => return TypeProto::default(),
        };
        TypeProto {
            value: Some(value),
            denotation: None,
        }
    }

    /// `float[N,4]`, `float` (unknown rank), `seq(float[N])`.
    pub fn display(&self) -> String {
        match self {
            TypeInfo::Tensor { elem, shape } => match shape {
                Some(s) => format!("{}[{}]", elem.name(), format_dims(s)),
                None => elem.name().to_string(),
            },
            TypeInfo::Sequence(t) => format!("seq({})", t.display()),
            TypeInfo::Optional(t) => format!("optional({})", t.display()),
            TypeInfo::Map(k, v) => format!("map({}, {})", k.name(), v.display()),
            TypeInfo::Unknown => "?".into(),
        }
    }
}

/// `N,4,?`
pub fn format_dims(dims: &[Dim]) -> String {
    dims.iter()
        .map(|d| match d {
            Some(e) => e.to_string(),
            None => "?".into(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A declared dimension. Converters write "unknown" several ways: no
/// value, an empty `dim_param`, a `dim_param` of `?`, a negative
/// `dim_value` (`-1`); all of them are unknown (`None`), never a size and
/// never one shared symbol.
fn dim_from_proto(d: &Dimension) -> Dim {
    match &d.value {
        Some(dimension::Value::DimValue(v)) if *v >= 0 => Some(Expr::int(*v)),
        Some(dimension::Value::DimParam(p)) if !is_unknown_param(p) => param_dim(p),
        _ => None,
    }
}

/// A `dim_param`: one of our expressions (`2*N`), else sympy's syntax
/// (`floor(height/2 - 1/2) + 1`), else a name with dots as PaddlePaddle
/// writes them (`p2o.DynamicDimension.0`, one symbol); anything else is
/// unknown.
fn param_dim(p: &str) -> Dim {
    if let Ok(e) = Expr::parse(p) {
        return Some(e);
    }
    if let Some(e) = crate::expr::from_sympy(p) {
        return Some(e);
    }
    let dotted = p.split('.').all(|part| {
        !part.is_empty() && part.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    }) && p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    dotted.then(|| Expr::sym(p))
}

/// A `dim_param` that names no symbol.
fn is_unknown_param(p: &str) -> bool {
    let p = p.trim();
    p.is_empty() || p == "?"
}

/// The declared types of a graph's inputs, each unknown dimension made its
/// own fresh symbol (`unk__1`, `unk__2`, … in input and axis order,
/// skipping names the graph's inputs and outputs already use), so that
/// inference can carry it and `run` can bind it from the tensor given,
/// without tying two unknown dimensions together. (`value_info` is not
/// consulted: `infer` writes these very symbols there, and the names must
/// stay the same from one call to the next.)
pub fn input_types_with_fresh_dims(g: &crate::proto::GraphProto) -> Vec<Option<TypeInfo>> {
    let mut used = std::collections::BTreeSet::new();
    for v in g.input.iter().chain(&g.output) {
        if let Some(t) = v.r#type.as_ref().map(TypeInfo::from_proto) {
            for e in t.shape().unwrap_or(&[]).iter().flatten() {
                used.extend(e.symbols());
            }
        }
    }
    let mut k = 0usize;
    let mut fresh = || loop {
        k += 1;
        let name = format!("unk__{k}");
        if !used.contains(&name) {
            return Expr::sym(&name);
        }
    };
    g.input
        .iter()
        .map(|vi| {
            let mut t = TypeInfo::from_proto(vi.r#type.as_ref()?);
            if let TypeInfo::Tensor {
                shape: Some(dims), ..
            } = &mut t
            {
                for d in dims.iter_mut().filter(|d| d.is_none()) {
                    *d = Some(fresh());
                }
            }
            Some(t)
        })
        .collect()
}

pub(crate) fn dims_from_proto(s: &TensorShapeProto) -> Vec<Dim> {
    s.dim.iter().map(dim_from_proto).collect()
}

pub(crate) fn dims_to_proto(dims: &[Dim]) -> TensorShapeProto {
    TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                value: d.as_ref().map(|e| match e.as_int() {
                    Some(v) => dimension::Value::DimValue(v),
                    None => dimension::Value::DimParam(e.to_string()),
                }),
                denotation: None,
            })
            .collect(),
    }
}

/// `[N,4]` for a shape proto.
pub fn format_shape_proto(s: &TensorShapeProto) -> String {
    format!("[{}]", format_dims(&dims_from_proto(s)))
}
