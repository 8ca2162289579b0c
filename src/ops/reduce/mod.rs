//! Reductions (ReduceSum ... ReduceSumSquare) and ArgMax/ArgMin.
//!
//! The ten reductions differ only in the function that reduces a group, so
//! they are one file, [`reductions`], with a module per operator; ArgMax and
//! ArgMin likewise in [`arg_extreme`]. Each module has the `shape` and
//! `kernel` its table entry names.

mod arg_extreme;
mod reductions;

use super::OpDef;
use arg_extreme::{arg_max, arg_min};
use reductions::{
    reduce_l1, reduce_l2, reduce_log_sum, reduce_log_sum_exp, reduce_max, reduce_mean, reduce_min,
    reduce_prod, reduce_sum, reduce_sum_square,
};

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "ReduceSum", 1, reduce_sum),
    op_def!("", "ReduceMean", 1, reduce_mean),
    op_def!("", "ReduceMax", 1, reduce_max),
    op_def!("", "ReduceMin", 1, reduce_min),
    op_def!("", "ReduceProd", 1, reduce_prod),
    op_def!("", "ReduceL1", 1, reduce_l1),
    op_def!("", "ReduceL2", 1, reduce_l2),
    op_def!("", "ReduceLogSum", 1, reduce_log_sum),
    op_def!("", "ReduceLogSumExp", 1, reduce_log_sum_exp),
    op_def!("", "ReduceSumSquare", 1, reduce_sum_square),
    op_def!("", "ArgMax", 1, arg_max),
    op_def!("", "ArgMin", 1, arg_min),
];
