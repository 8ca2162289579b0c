//! The preview training optimisers (ai.onnx.preview.training): Adagrad,
//! Momentum, Adam.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`optimizer_inputs`] holds the variadic input groups and the
//! output rule they share.

mod adagrad;
mod adam;
mod momentum;
mod optimizer_inputs;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("ai.onnx.preview.training", "Adagrad", 1, adagrad),
    op_def!("ai.onnx.preview.training", "Momentum", 1, momentum),
    op_def!("ai.onnx.preview.training", "Adam", 1, adam),
];
