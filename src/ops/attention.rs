//! Transformer operators.

use super::OpDef;
use crate::ops::kernels::attention as k;
use crate::ops::shape_rules::attention as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "Attention", since: 1, shape: s::attention, kernel: k::attention, deterministic: true },
    OpDef { domain: "ai.onnx.preview", op_type: "FlexAttention", since: 1, shape: s::flex_attention, kernel: k::flex_attention, deterministic: true },
    OpDef { domain: "", op_type: "RotaryEmbedding", since: 1, shape: s::rotary_embedding, kernel: k::rotary_embedding, deterministic: true },
    OpDef { domain: "", op_type: "RMSNormalization", since: 1, shape: s::rms_normalization, kernel: k::rms_normalization, deterministic: true },
    OpDef { domain: "", op_type: "SwiGLU", since: 1, shape: s::swiglu, kernel: k::swiglu, deterministic: true },
    OpDef { domain: "", op_type: "LinearAttention", since: 1, shape: s::linear_attention, kernel: k::linear_attention, deterministic: true },
    OpDef { domain: "", op_type: "CausalConvWithState", since: 1, shape: s::causal_conv_with_state, kernel: k::causal_conv_with_state, deterministic: true },
    OpDef { domain: "", op_type: "TensorScatter", since: 1, shape: s::tensor_scatter, kernel: k::tensor_scatter, deterministic: true },
];
