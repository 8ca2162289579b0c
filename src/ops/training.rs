//! The preview training optimisers (ai.onnx.preview.training).

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "ai.onnx.preview.training", op_type: "Adagrad", since: 1, shape: crate::ops::shape_rules::training::optimizer, kernel: crate::ops::kernels::training::adagrad, deterministic: true },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Momentum", since: 1, shape: crate::ops::shape_rules::training::optimizer, kernel: crate::ops::kernels::training::momentum, deterministic: true },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Adam", since: 1, shape: crate::ops::shape_rules::training::optimizer, kernel: crate::ops::kernels::training::adam, deterministic: true },
];
