//! Tensor manipulation operators.

use super::OpDef;
use crate::runtime::kernels::manip as k;
use crate::shape::rules::manip as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "Reshape",
        since: 1,
        shape: Some(s::reshape),
        kernel: Some(k::reshape),
    },
    OpDef {
        domain: "",
        op_type: "Transpose",
        since: 1,
        shape: Some(s::transpose),
        kernel: Some(k::transpose),
    },
    OpDef {
        domain: "",
        op_type: "Concat",
        since: 1,
        shape: Some(s::concat),
        kernel: Some(k::concat),
    },
];
