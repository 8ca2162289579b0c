//! Symbolic dimensions from known integers, for the rules of this family.

use crate::expr::Expr;
use crate::value_type::Dim;

pub(super) fn dims_of(v: &[Expr]) -> Vec<Dim> {
    v.iter().map(|e| Some(e.clone())).collect()
}

pub(super) fn int_dim(v: i64) -> Dim {
    Some(Expr::int(v))
}
