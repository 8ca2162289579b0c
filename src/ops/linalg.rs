//! Matrix products.

use super::OpDef;
use crate::runtime::kernels::linalg as k;
use crate::shape::rules::linalg as s;

pub const TABLE: &[OpDef] = &[OpDef {
    domain: "",
    op_type: "MatMul",
    since: 1,
    shape: Some(s::matmul),
    kernel: Some(k::matmul),
}];
