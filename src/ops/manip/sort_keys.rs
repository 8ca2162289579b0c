//! Comparable keys of any element type, for the orderings of `Unique` and
//! `TopK`: integers exactly, floats by value (NaN by its total order),
//! strings by bytes.

use crate::ops::kernel::KernelError;
use crate::tensor::{DataType, Tensor};
use std::cmp::Ordering;

/// A totally ordered element key (ints exactly, floats by value, strings).
#[derive(Clone, Debug)]
pub(super) enum Key {
    I(i128),
    F(f64),
    S(String),
}

pub(super) fn key_cmp(a: &Key, b: &Key) -> Ordering {
    match (a, b) {
        (Key::I(x), Key::I(y)) => x.cmp(y),
        (Key::F(x), Key::F(y)) => x.partial_cmp(y).unwrap_or_else(|| x.total_cmp(y)),
        (Key::S(x), Key::S(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

pub(super) fn keys(t: &Tensor) -> Result<Vec<Key>, KernelError> {
    Ok(match t {
        Tensor::Str(a) => a.iter().map(|s| Key::S(s.clone())).collect(),
        Tensor::U64(a) => a.iter().map(|&v| Key::I(v as i128)).collect(),
        t if t.dtype().is_int() || t.dtype() == DataType::Bool => t
            .to_i64_vec()?
            .into_iter()
            .map(|v| Key::I(v as i128))
            .collect(),
        t => t
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("unsupported element type"))?
            .into_iter()
            .map(Key::F)
            .collect(),
    })
}

pub(super) fn slice_cmp(a: &[Key], b: &[Key]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c = key_cmp(x, y);
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}
