//! Control flow operators.

use super::OpDef;
use crate::ops::kernels::control as k;
use crate::ops::shape_rules::control as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "If", since: 1, shape: s::if_rule, kernel: k::if_op, deterministic: true },
    OpDef { domain: "", op_type: "Loop", since: 1, shape: s::loop_rule, kernel: k::loop_op, deterministic: true },
    OpDef { domain: "", op_type: "Scan", since: 1, shape: s::scan_rule, kernel: k::scan, deterministic: true },
];
