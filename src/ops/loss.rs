//! Losses: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "NegativeLogLikelihoodLoss", since: 1, shape: crate::ops::shape_rules::loss::negative_log_likelihood_loss, kernel: crate::ops::kernels::loss::negative_log_likelihood_loss, deterministic: true },
    OpDef { domain: "", op_type: "SoftmaxCrossEntropyLoss", since: 1, shape: crate::ops::shape_rules::loss::softmax_cross_entropy_loss, kernel: crate::ops::kernels::loss::softmax_cross_entropy_loss, deterministic: true },
];
