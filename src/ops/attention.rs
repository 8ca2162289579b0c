//! Transformer operators.

use super::OpDef;
use crate::ops::kernels::attention as k;
use crate::ops::shape_rules::attention as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "Attention", since: 1, shape: Some(s::attention), kernel: Some(k::attention) },
    OpDef { domain: "ai.onnx.preview", op_type: "FlexAttention", since: 1, shape: Some(s::flex_attention), kernel: Some(k::flex_attention) },
    OpDef { domain: "", op_type: "RotaryEmbedding", since: 1, shape: Some(s::rotary_embedding), kernel: Some(k::rotary_embedding) },
    OpDef { domain: "", op_type: "RMSNormalization", since: 1, shape: Some(s::rms_normalization), kernel: Some(k::rms_normalization) },
    OpDef { domain: "", op_type: "SwiGLU", since: 1, shape: Some(s::swiglu), kernel: Some(k::swiglu) },
    OpDef { domain: "", op_type: "LinearAttention", since: 1, shape: Some(s::linear_attention), kernel: Some(k::linear_attention) },
    OpDef { domain: "", op_type: "CausalConvWithState", since: 1, shape: Some(s::causal_conv_with_state), kernel: Some(k::causal_conv_with_state) },
    OpDef { domain: "", op_type: "TensorScatter", since: 1, shape: Some(s::tensor_scatter), kernel: Some(k::tensor_scatter) },
];
