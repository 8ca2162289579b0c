//! Shape inference: one engine ([`infer_model`]) that walks a graph in
//! topological order and applies each operator's rule from the operator
//! table ([`crate::ops`]). Dimensions are symbolic expressions
//! ([`crate::expr::Expr`]); small integer tensors computed from shapes are
//! tracked symbolically (data propagation), so `Reshape(x, Concat(Shape(x)[0], [-1]))`
//! stays exact. Declared dimensions that meet an inferred expression give
//! equations (`M = 2*N`); conflicts are warnings naming the node.

mod check;
mod engine;
#[cfg(test)]
mod tests;

pub use crate::value_type::{
    format_dims, format_shape_proto, input_types_with_fresh_dims, Dim, TypeInfo,
};
pub use check::{bind_symbols, check_shapes, CheckRow, CheckStatus, GivenInput};
pub use engine::{infer_model, Equation, InferReport, Source, ValueReport};
