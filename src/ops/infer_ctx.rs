//! What a shape rule sees: its node's input types and known values, and
//! where it writes its outputs.

use super::Attrs;
use crate::expr::Expr;
use crate::proto::{GraphProto, NodeProto};
use crate::tensor::{DataType, Tensor};
use crate::value_type::{Dim, TypeInfo};

/// The largest rank shape inference builds from a length declared in the
/// model (a shape or axes input's length).
pub const MAX_RANK: usize = 1 << 16;

/// Why a rule could not infer a node (reported as a warning). Each
/// variant displays exactly the message the shell prints; an error of the
/// operator's own meaning (shared with its kernel) or of an attribute's
/// type is kept as it is, as the `source`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// What the rule found wrong with the node's input types, values or
    /// attributes.
    #[error("{0}")]
    Invalid(String),
    /// An attribute of the wrong type.
    #[error(transparent)]
    Attribute(#[from] crate::ops::AttrTypeError),
    /// A failure of a helper the rule shares with the kernel (a constant's
    /// value, slice indices, an einsum equation).
    #[error(transparent)]
    Kernel(#[from] crate::ops::KernelError),
}

impl ShapeError {
    pub fn new(msg: impl Into<String>) -> Self {
        ShapeError::Invalid(msg.into())
    }
}

/// `return Err(ShapeError::new(format!(...)))`
#[macro_export]
macro_rules! shape_bail {
    ($($arg:tt)*) => {
        return Err($crate::ops::ShapeError::new(format!($($arg)*)))
    };
}

/// A shape rule: reads inputs from the context, sets outputs.
pub type ShapeRule = fn(&mut InferCtx) -> Result<(), ShapeError>;

/// A small tensor whose elements are known as integer expressions (data
/// propagation: Shape, Gather, Concat... of shapes). A float tensor has a
/// value only while every element is an integer (`Cast(Shape(x), to=float)`,
/// Resize scales `[1, 1, 2, 2]`): rules that could leave the integers
/// (float Div) propagate only exact results.
#[derive(Clone, Debug, PartialEq)]
pub struct SymValue {
    pub shape: Vec<usize>,
    pub values: Vec<Expr>,
}

/// Up to what magnitude a float type holds every integer exactly (2^53
/// for float64, 2^24 for float32, 2^8 for the 16-bit types).
fn exact_float_limit(dtype: DataType) -> Option<f64> {
    match dtype {
        DataType::Double => Some(9007199254740992.0),
        DataType::Float => Some(16777216.0),
        DataType::Float16 | DataType::Bfloat16 => Some(256.0),
        _ => None,
    }
}

impl SymValue {
    /// Largest tensor (in elements) whose value is tracked.
    pub const MAX_TRACKED: usize = 1024;

    /// The value of a small constant tensor: integers and booleans, and
    /// floats whose elements are all integers the type holds exactly.
    pub fn of_tensor(t: &Tensor) -> Option<SymValue> {
        if t.len() > Self::MAX_TRACKED {
            return None;
        }
        let d = t.dtype();
        let values: Vec<i64> = if d.is_int() || d == DataType::Bool {
            t.to_i64_vec().ok()?
        } else {
            let lim = exact_float_limit(d)?;
            t.to_f64_vec()?
                .into_iter()
                .map(|v| (v.fract() == 0.0 && v.abs() <= lim).then_some(v as i64))
                .collect::<Option<_>>()?
        };
        Some(SymValue {
            shape: t.shape().to_vec(),
            values: values.into_iter().map(Expr::int).collect(),
        })
    }

    /// Whether this value can be held by a float type exactly: every
    /// constant element within the type's exact integers (symbolic
    /// elements are sizes, assumed to fit).
    pub fn fits_float(&self, dtype: DataType) -> bool {
        let Some(lim) = exact_float_limit(dtype) else {
            return false;
        };
        self.values
            .iter()
            .all(|e| e.as_int().is_none_or(|v| (v as f64).abs() <= lim))
    }

    pub fn vector(values: Vec<Expr>) -> SymValue {
        SymValue {
            shape: vec![values.len()],
            values,
        }
    }

    pub fn scalar(v: Expr) -> SymValue {
        SymValue {
            shape: vec![],
            values: vec![v],
        }
    }

    /// All elements as integers, when they are constants.
    pub fn ints(&self) -> Option<Vec<i64>> {
        self.values.iter().map(|e| e.as_int()).collect()
    }
}

/// Infers a subgraph given its input types; returns its output types.
/// Infers a subgraph given its input types; returns its output types with
/// their known values.
pub type SubgraphInfer<'a> =
    dyn FnMut(&GraphProto, Vec<Option<TypeInfo>>, &str) -> Vec<SubgraphOutput> + 'a;

/// One output of a subgraph: its type and, when known, its value.
pub type SubgraphOutput = Option<(TypeInfo, Option<SymValue>)>;

/// The context of one node's inference.
pub struct InferCtx<'a> {
    pub node: &'a NodeProto,
    pub opset: i64,
    pub attrs: Attrs<'a>,
    pub(crate) inputs: Vec<Option<TypeInfo>>,
    pub(crate) values: Vec<Option<SymValue>>,
    pub(crate) outputs: Vec<Option<TypeInfo>>,
    pub(crate) out_values: Vec<Option<SymValue>>,
    pub(crate) fresh: &'a std::cell::Cell<usize>,
    pub(crate) warnings: Vec<String>,
    pub(crate) subgraph: &'a mut SubgraphInfer<'a>,
}

impl<'a> InferCtx<'a> {
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// True when input `i` is given (not absent, not `""`).
    pub fn has_input(&self, i: usize) -> bool {
        self.node.input.get(i).is_some_and(|s| !s.is_empty())
    }

    /// The type of input `i`, when present and known.
    pub fn input(&self, i: usize) -> Option<&TypeInfo> {
        self.inputs.get(i).and_then(|t| t.as_ref())
    }

    pub fn elem(&self, i: usize) -> Option<DataType> {
        self.input(i)
            .and_then(|t| t.elem())
            .filter(|e| *e != DataType::Undefined)
    }

    /// The element type of input `i`, or an error saying it is unknown.
    pub fn elem_req(&self, i: usize) -> Result<DataType, ShapeError> {
        self.elem(i)
            .ok_or_else(|| ShapeError::new(format!("the element type of input {i} is unknown")))
    }

    pub fn shape(&self, i: usize) -> Option<&[Dim]> {
        self.input(i).and_then(|t| t.shape())
    }

    pub fn rank(&self, i: usize) -> Option<usize> {
        self.shape(i).map(|s| s.len())
    }

    /// The known value of input `i` (a small integer tensor).
    pub fn value(&self, i: usize) -> Option<&SymValue> {
        self.values.get(i).and_then(|v| v.as_ref())
    }

    /// The value of input `i` as constant integers.
    pub fn ints(&self, i: usize) -> Option<Vec<i64>> {
        self.value(i).and_then(|v| v.ints())
    }

    /// The elements of 1-D input `i` used as a shape: the known value, else
    /// (length known) fresh symbols, one per data-dependent element.
    /// The length a 1-D input declares (`int64[n]`), as the rank of an
    /// output built from it: `None` when unknown or negative, an error past
    /// [`MAX_RANK`] (a model declaring `int64[4611686018427387904]` must not
    /// make inference allocate per declared element).
    pub fn declared_rank(&self, i: usize) -> Result<Option<usize>, ShapeError> {
        let n = match self.shape(i) {
            Some([Some(d)]) => d.as_int(),
            _ => None,
        };
        match n {
            Some(n) if n > MAX_RANK as i64 => Err(ShapeError::new(format!(
                "input '{}' declares {n} elements: an output rank above {MAX_RANK} is refused",
                self.node.input.get(i).map_or("", |s| s.as_str())
            ))),
            Some(n) if n >= 0 => Ok(Some(n as usize)),
            _ => Ok(None),
        }
    }

    pub fn shape_value_or_fresh(&mut self, i: usize) -> Option<Vec<Expr>> {
        if let Some(v) = self.value(i) {
            return Some(v.values.clone());
        }
        let n = match self.shape(i)? {
            [d] => d.as_ref()?.as_int()?,
            _ => return None,
        };
        if !(0..=64).contains(&n) {
            return None;
        }
        Some((0..n).map(|_| self.fresh()).collect())
    }

    pub fn set(&mut self, i: usize, t: TypeInfo) {
        if i < self.outputs.len() {
            self.outputs[i] = Some(t);
        }
    }

    pub fn set_tensor(&mut self, i: usize, elem: DataType, shape: Option<Vec<Dim>>) {
        self.set(i, TypeInfo::Tensor { elem, shape });
    }

    pub fn set_value(&mut self, i: usize, v: SymValue) {
        if i < self.out_values.len() {
            self.out_values[i] = Some(v);
        }
    }

    /// A fresh symbol for a data-dependent dimension.
    pub fn fresh(&mut self) -> Expr {
        let n = self.fresh.get() + 1;
        self.fresh.set(n);
        Expr::sym(&format!("_{}{}", self.node.op_type(), n))
    }

    pub fn warn(&mut self, msg: impl Into<String>) {
        self.warnings.push(msg.into());
    }

    /// Infers a graph attribute with the given input types.
    pub fn infer_subgraph(
        &mut self,
        attr: &str,
        inputs: Vec<Option<TypeInfo>>,
    ) -> Result<Vec<Option<TypeInfo>>, ShapeError> {
        Ok(self
            .infer_subgraph_values(attr, inputs)?
            .into_iter()
            .map(|o| o.map(|(t, _)| t))
            .collect())
    }

    /// Infers a graph attribute; its outputs' types and known values.
    pub fn infer_subgraph_values(
        &mut self,
        attr: &str,
        inputs: Vec<Option<TypeInfo>>,
    ) -> Result<Vec<SubgraphOutput>, ShapeError> {
        let g = self
            .attrs
            .graph(attr)
            .ok_or_else(|| ShapeError::new(format!("missing graph attribute '{attr}'")))?;
        let scope = if self.node.name().is_empty() {
            self.node.op_type().to_string()
        } else {
            self.node.name().to_string()
        };
        Ok((self.subgraph)(g, inputs, &format!("{scope}/{attr}")))
    }
}
