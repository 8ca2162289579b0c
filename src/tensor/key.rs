//! Elements as hash keys (LabelEncoder's table, TfIdfVectorizer's
//! n-grams): integers, strings, and floats by value.

use super::{Tensor, TensorError};

/// An element usable as a hash key: an integer, a string, or the bits of a
/// float with NaN normalised (NaN matches NaN) and -0 read as 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Int(i64),
    Str(String),
    Float(u64),
}

impl Key {
    pub fn float(v: f64) -> Key {
        if v.is_nan() {
            Key::Float(f64::NAN.to_bits())
        } else if v == 0.0 {
            Key::Float(0)
        } else {
            Key::Float(v.to_bits())
        }
    }

    /// Every element of `t` as a key; `what` names the tensor in the error
    /// for an element type that cannot be a key.
    pub fn all_of(t: &Tensor, what: &str) -> Result<Vec<Key>, TensorError> {
        Ok(match t {
            Tensor::Str(a) => a.iter().cloned().map(Key::Str).collect(),
            t if t.dtype().is_float() => match t.to_f64_vec() {
                Some(v) => v.into_iter().map(Key::float).collect(),
                None => {
                    return Err(TensorError::new(format!(
                        "{what} must be numeric or strings"
                    )))
                }
            },
            t => t
                .to_i64_vec()
                .map_err(|_| TensorError::new(format!("{what} cannot be keys: {}", t.dtype())))?
                .into_iter()
                .map(Key::Int)
                .collect(),
        })
    }
}
