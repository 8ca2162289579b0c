//! Reductions.

use super::OpDef;
use crate::ops::kernels::reduce as k;
use crate::ops::shape_rules::reduce as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "ReduceSum",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_sum,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceMean",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_mean,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceMax",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_max,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceMin",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_min,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceProd",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_prod,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceL1",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_l1,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceL2",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_l2,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceLogSum",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_log_sum,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceLogSumExp",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_log_sum_exp,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ReduceSumSquare",
        since: 1,
        shape: s::reduce,
        kernel: k::reduce_sum_square,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ArgMax",
        since: 1,
        shape: s::arg,
        kernel: k::arg_max,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "ArgMin",
        since: 1,
        shape: s::arg,
        kernel: k::arg_min,
        deterministic: true,
    },
];
