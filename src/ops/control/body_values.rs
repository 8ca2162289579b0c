//! What If, Loop and Scan share: the condition scalar, empty and padded
//! stacks of body outputs, and the type edits of their shape rules
//! (a dimension inserted or removed, branches merged).

use crate::bail;
use crate::ops::kernel::KernelError;
use crate::ops::kernels::manip::concat_tensors;
use crate::ops::shape_rules::type_merge::merge_types;
use crate::ops::InferCtx;
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::{Dim, TypeInfo};

/// The single boolean of a condition tensor.
pub(super) fn bool_scalar(t: &Tensor, what: &str) -> Result<bool, KernelError> {
    if t.len() != 1 {
        bail!("{what} must have one element, got shape {:?}", t.shape());
    }
    match t {
        Tensor::Bool(a) => Ok(a.iter().next().copied().unwrap_or(false)),
        other => match other.to_f64_vec() {
            Some(v) if !v.is_empty() => Ok(v[0] != 0.0),
            _ => bail!("{what} must be bool, got {}", other.dtype()),
        },
    }
}

/// An empty stack (`[0, ...]`) of values of a declared type.
pub(super) fn empty_stack(ty: &TypeInfo) -> Result<Value, KernelError> {
    match ty {
        TypeInfo::Tensor { elem, shape } => {
            let mut dims = vec![0usize];
            if let Some(s) = shape {
                for d in s {
                    dims.push(d.as_ref().and_then(|e| e.as_int()).unwrap_or(0).max(0) as usize);
                }
            }
            let elem = if *elem == DataType::Undefined {
                DataType::Float
            } else {
                *elem
            };
            Ok(Value::Tensor(Tensor::zeros(elem, &dims)?))
        }
        // an undeclared body output: nothing tells its type, float is a guess
        TypeInfo::Unknown => Ok(Value::Tensor(Tensor::zeros(DataType::Float, &[0])?)),
        _ => bail!("cannot build an empty scan output of type {}", ty.display()),
    }
}

pub(super) fn as_tensor(v: Value, what: &str) -> Result<Tensor, KernelError> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => bail!("{what} must be a tensor, got {}", other.describe()),
    }
}

/// Pads a tensor with zeros at the end of axis 0 up to `shape`.
pub(super) fn pad_to(t: &Tensor, shape: &[usize]) -> Result<Tensor, KernelError> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    if t.rank() != shape.len() || t.shape()[1..] != shape[1..] {
        bail!(
            "scan outputs of shapes {:?} and {shape:?} cannot be stacked",
            t.shape()
        );
    }
    let mut pshape = shape.to_vec();
    pshape[0] = shape[0] - t.shape()[0].min(shape[0]);
    let z = Tensor::zeros(t.dtype(), &pshape)?;
    concat_tensors(&[t, &z], 0, t)
}

pub(super) fn merge_opt(a: Option<&TypeInfo>, b: Option<&TypeInfo>) -> Option<TypeInfo> {
    match (a, b) {
        (Some(x), Some(y)) => Some(merge_types(x, y)),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    }
}

pub(super) fn scalar(elem: DataType) -> TypeInfo {
    TypeInfo::Tensor {
        elem,
        shape: Some(vec![]),
    }
}

/// A type with a dimension inserted at `axis` (tensors only).
pub(super) fn insert_dim(t: &TypeInfo, axis: usize, d: Dim) -> TypeInfo {
    match t {
        TypeInfo::Tensor { elem, shape } => TypeInfo::Tensor {
            elem: *elem,
            shape: shape.as_ref().map(|s| {
                let mut s = s.clone();
                s.insert(axis.min(s.len()), d);
                s
            }),
        },
        other => other.clone(),
    }
}

/// A type with the dimension at `axis` removed (tensors only).
pub(super) fn remove_dim(t: &TypeInfo, axis: usize) -> TypeInfo {
    match t {
        TypeInfo::Tensor { elem, shape } => TypeInfo::Tensor {
            elem: *elem,
            shape: shape.as_ref().map(|s| {
                let mut s = s.clone();
                if axis < s.len() {
                    s.remove(axis);
                }
                s
            }),
        },
        other => other.clone(),
    }
}

/// Like [`merge_types`], but dimensions the two types disagree on become
/// fresh symbols (the size depends on data) instead of unknown.
pub(super) fn merge_fresh(cx: &mut InferCtx, a: &TypeInfo, b: &TypeInfo) -> TypeInfo {
    let mut m = merge_types(a, b);
    freshen(cx, &mut m, a, b);
    m
}

pub(super) fn freshen(cx: &mut InferCtx, m: &mut TypeInfo, a: &TypeInfo, b: &TypeInfo) {
    match (m, a, b) {
        (
            TypeInfo::Tensor { shape: Some(s), .. },
            TypeInfo::Tensor { shape: Some(x), .. },
            TypeInfo::Tensor { shape: Some(y), .. },
        ) => {
            for (k, d) in s.iter_mut().enumerate() {
                if d.is_none() && x[k].is_some() && y[k].is_some() {
                    *d = Some(cx.fresh());
                }
            }
        }
        (TypeInfo::Sequence(m), TypeInfo::Sequence(x), TypeInfo::Sequence(y))
        | (TypeInfo::Optional(m), TypeInfo::Optional(x), TypeInfo::Optional(y)) => {
            freshen(cx, m, x, y)
        }
        _ => {}
    }
}
