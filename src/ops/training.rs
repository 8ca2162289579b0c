//! The preview training optimisers (ai.onnx.preview.training).

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "ai.onnx.preview.training", op_type: "Adagrad", since: 1, shape: Some(crate::ops::shape_rules::training::optimizer), kernel: Some(crate::ops::kernels::training::adagrad) },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Momentum", since: 1, shape: Some(crate::ops::shape_rules::training::optimizer), kernel: Some(crate::ops::kernels::training::momentum) },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Adam", since: 1, shape: Some(crate::ops::shape_rules::training::optimizer), kernel: Some(crate::ops::kernels::training::adam) },
];
