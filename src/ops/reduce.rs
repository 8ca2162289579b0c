//! Reductions.

use super::OpDef;
use crate::ops::kernels::reduce as k;
use crate::ops::shape_rules::reduce as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "ReduceSum",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_sum),
    },
    OpDef {
        domain: "",
        op_type: "ReduceMean",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_mean),
    },
    OpDef {
        domain: "",
        op_type: "ReduceMax",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_max),
    },
    OpDef {
        domain: "",
        op_type: "ReduceMin",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_min),
    },
    OpDef {
        domain: "",
        op_type: "ReduceProd",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_prod),
    },
    OpDef {
        domain: "",
        op_type: "ReduceL1",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_l1),
    },
    OpDef {
        domain: "",
        op_type: "ReduceL2",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_l2),
    },
    OpDef {
        domain: "",
        op_type: "ReduceLogSum",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_log_sum),
    },
    OpDef {
        domain: "",
        op_type: "ReduceLogSumExp",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_log_sum_exp),
    },
    OpDef {
        domain: "",
        op_type: "ReduceSumSquare",
        since: 1,
        shape: Some(s::reduce),
        kernel: Some(k::reduce_sum_square),
    },
    OpDef {
        domain: "",
        op_type: "ArgMax",
        since: 1,
        shape: Some(s::arg),
        kernel: Some(k::arg_max),
    },
    OpDef {
        domain: "",
        op_type: "ArgMin",
        since: 1,
        shape: Some(s::arg),
        kernel: Some(k::arg_min),
    },
];
