//! Merging the types two branches (If) or two sequence elements give:
//! what both agree on.

use crate::tensor::DataType;
use crate::value_type::{Dim, TypeInfo};

/// Merges two dimensions: equal kept, different unknown.
pub fn merge_dim(a: &Dim, b: &Dim) -> Dim {
    match (a, b) {
        (Some(x), Some(y)) if x == y => Some(x.clone()),
        _ => None,
    }
}

/// Merges two types: what both agree on.
pub fn merge_types(a: &TypeInfo, b: &TypeInfo) -> TypeInfo {
    match (a, b) {
        (
            TypeInfo::Tensor {
                elem: e1,
                shape: s1,
            },
            TypeInfo::Tensor {
                elem: e2,
                shape: s2,
            },
        ) => {
            let elem = if e1 == e2 || *e2 == DataType::Undefined {
                *e1
            } else if *e1 == DataType::Undefined {
                *e2
            } else {
                DataType::Undefined
            };
            let shape = match (s1, s2) {
                (Some(x), Some(y)) if x.len() == y.len() => {
                    Some(x.iter().zip(y).map(|(p, q)| merge_dim(p, q)).collect())
                }
                _ => None,
            };
            TypeInfo::Tensor { elem, shape }
        }
        (TypeInfo::Sequence(x), TypeInfo::Sequence(y)) => {
            TypeInfo::Sequence(Box::new(merge_types(x, y)))
        }
        (TypeInfo::Optional(x), TypeInfo::Optional(y)) => {
            TypeInfo::Optional(Box::new(merge_types(x, y)))
        }
        (TypeInfo::Unknown, o) | (o, TypeInfo::Unknown) => o.clone(),
        (x, _) => x.clone(),
    }
}
