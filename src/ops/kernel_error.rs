//! The error of a kernel builder or a running kernel.
//!
//! It belongs to the operator layer (kernel builders and the helpers that
//! give an operator its meaning return it); the runtime re-exports it.

use std::fmt;

/// Why a kernel could not be built or could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError(pub String);

impl KernelError {
    pub fn new(msg: impl Into<String>) -> Self {
        KernelError(msg.into())
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KernelError {}

impl From<crate::tensor::TensorError> for KernelError {
    fn from(e: crate::tensor::TensorError) -> Self {
        KernelError(e.0)
    }
}

impl From<crate::tensor::budget::OverBudget> for KernelError {
    fn from(e: crate::tensor::budget::OverBudget) -> Self {
        KernelError(e.to_string())
    }
}

impl From<crate::ops::AttrTypeError> for KernelError {
    fn from(e: crate::ops::AttrTypeError) -> Self {
        KernelError(e.to_string())
    }
}

impl From<ndarray::ShapeError> for KernelError {
    fn from(e: ndarray::ShapeError) -> Self {
        KernelError(e.to_string())
    }
}

/// `return Err(KernelError::new(format!(...)))` in one line.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::ops::KernelError::new(format!($($arg)*)))
    };
}
