//! Elementwise operators.

use super::OpDef;
use crate::runtime::kernels::elementwise as k;
use crate::shape::rules::elementwise as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "Add",
        since: 1,
        shape: Some(s::add),
        kernel: Some(k::add),
    },
    OpDef {
        domain: "",
        op_type: "Sub",
        since: 1,
        shape: Some(s::sub),
        kernel: Some(k::sub),
    },
    OpDef {
        domain: "",
        op_type: "Mul",
        since: 1,
        shape: Some(s::mul),
        kernel: Some(k::mul),
    },
    OpDef {
        domain: "",
        op_type: "Div",
        since: 1,
        shape: Some(s::div),
        kernel: Some(k::div),
    },
    OpDef {
        domain: "",
        op_type: "Relu",
        since: 1,
        shape: Some(s::same_as_input),
        kernel: Some(k::relu),
    },
    OpDef {
        domain: "",
        op_type: "Identity",
        since: 1,
        shape: Some(s::identity),
        kernel: Some(k::identity),
    },
];
