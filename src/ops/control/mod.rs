//! Control flow: If, Loop, Scan.
//!
//! One operator per file: its shape rule (`shape`, through the bodies) and
//! kernel builder (`kernel`, running the bodies the engine compiled).
//! [`body_values`] holds what they share, [`pass_through`] finds the
//! carried values a Loop body hands on unchanged; the slices and stacks they share
//! with the sequence operators are in `kernels/axis_slices.rs`, the type
//! merging in `shape_rules/type_merge.rs`.

mod body_values;
mod if_op;
pub(crate) mod loop_op;
mod pass_through;
mod scan;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "If", 1, if_op),
    op_def!("", "Loop", 1, loop_op),
    op_def!("", "Scan", 1, scan),
];
