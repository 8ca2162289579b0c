//! Transformer operators: Attention, RotaryEmbedding, RMSNormalization,
//! SwiGLU, LinearAttention, CausalConvWithState, TensorScatter and the
//! preview FlexAttention.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`attention_values`] holds what they share.

// the operator is named like its family
#[allow(clippy::module_inception)]
mod attention;
mod attention_values;
mod causal_conv_with_state;
mod flex_attention;
mod linear_attention;
mod rms_normalization;
mod rotary_embedding;
mod swiglu;
mod tensor_scatter;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "Attention", 1, attention),
    op_def!("ai.onnx.preview", "FlexAttention", 1, flex_attention),
    op_def!("", "RotaryEmbedding", 1, rotary_embedding),
    op_def!("", "RMSNormalization", 1, rms_normalization),
    op_def!("", "SwiGLU", 1, swiglu),
    op_def!("", "LinearAttention", 1, linear_attention),
    op_def!("", "CausalConvWithState", 1, causal_conv_with_state),
    op_def!("", "TensorScatter", 1, tensor_scatter),
];
