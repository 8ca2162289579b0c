//! Control flow operators.

use super::OpDef;
use crate::ops::kernels::control as k;
use crate::ops::shape_rules::control as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "If", since: 1, shape: Some(s::if_rule), kernel: Some(k::if_op) },
    OpDef { domain: "", op_type: "Loop", since: 1, shape: Some(s::loop_rule), kernel: Some(k::loop_op) },
    OpDef { domain: "", op_type: "Scan", since: 1, shape: Some(s::scan_rule), kernel: Some(k::scan) },
];
