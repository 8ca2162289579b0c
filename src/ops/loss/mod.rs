//! Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`reduction`] holds what both share: the `reduction` and
//! `ignore_index` attributes decoded once, the output shape they give, and
//! the negative log-likelihood core.

mod negative_log_likelihood_loss;
mod reduction;
mod softmax_cross_entropy_loss;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "NegativeLogLikelihoodLoss", 12, negative_log_likelihood_loss),
    op_def!("", "SoftmaxCrossEntropyLoss", 12, softmax_cross_entropy_loss),
];
