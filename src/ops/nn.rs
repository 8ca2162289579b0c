//! Neural-network operators: softmax family, normalisations, Dropout,
//! pooling and convolutions.

use super::OpDef;
use crate::runtime::kernels::conv as kc;
use crate::runtime::kernels::nn as k;
use crate::shape::rules::nn as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "Softmax",
        since: 1,
        shape: Some(s::softmax),
        kernel: Some(k::softmax),
    },
    OpDef {
        domain: "",
        op_type: "LogSoftmax",
        since: 1,
        shape: Some(s::softmax),
        kernel: Some(k::log_softmax),
    },
    OpDef {
        domain: "",
        op_type: "Hardmax",
        since: 1,
        shape: Some(s::softmax),
        kernel: Some(k::hardmax),
    },
    OpDef {
        domain: "",
        op_type: "Conv",
        since: 1,
        shape: Some(s::conv),
        kernel: Some(kc::conv),
    },
    OpDef {
        domain: "",
        op_type: "ConvInteger",
        since: 1,
        shape: Some(s::conv_integer),
        kernel: Some(kc::conv_integer),
    },
    OpDef {
        domain: "",
        op_type: "ConvTranspose",
        since: 1,
        shape: Some(s::conv_transpose),
        kernel: Some(kc::conv_transpose),
    },
    OpDef {
        domain: "",
        op_type: "MaxPool",
        since: 1,
        shape: Some(s::pool),
        kernel: Some(k::max_pool),
    },
    OpDef {
        domain: "",
        op_type: "AveragePool",
        since: 1,
        shape: Some(s::pool),
        kernel: Some(k::average_pool),
    },
    OpDef {
        domain: "",
        op_type: "LpPool",
        since: 1,
        shape: Some(s::pool),
        kernel: Some(k::lp_pool),
    },
    OpDef {
        domain: "",
        op_type: "GlobalAveragePool",
        since: 1,
        shape: Some(s::global_pool),
        kernel: Some(k::global_average_pool),
    },
    OpDef {
        domain: "",
        op_type: "GlobalMaxPool",
        since: 1,
        shape: Some(s::global_pool),
        kernel: Some(k::global_max_pool),
    },
    OpDef {
        domain: "",
        op_type: "BatchNormalization",
        since: 1,
        shape: Some(s::batch_norm),
        kernel: Some(k::batch_norm),
    },
    OpDef {
        domain: "",
        op_type: "InstanceNormalization",
        since: 1,
        shape: Some(s::same_as_input),
        kernel: Some(k::instance_norm),
    },
    OpDef {
        domain: "",
        op_type: "LayerNormalization",
        since: 1,
        shape: Some(s::layer_norm),
        kernel: Some(k::layer_norm),
    },
    OpDef {
        domain: "",
        op_type: "GroupNormalization",
        since: 1,
        shape: Some(s::same_as_input),
        kernel: Some(k::group_norm),
    },
    OpDef {
        domain: "",
        op_type: "LRN",
        since: 1,
        shape: Some(s::same_as_input),
        kernel: Some(k::lrn),
    },
    OpDef {
        domain: "",
        op_type: "LpNormalization",
        since: 1,
        shape: Some(s::same_as_input),
        kernel: Some(k::lp_norm),
    },
    OpDef {
        domain: "",
        op_type: "MeanVarianceNormalization",
        since: 1,
        shape: Some(s::same_as_input),
        kernel: Some(k::mvn),
    },
    OpDef {
        domain: "",
        op_type: "Dropout",
        since: 1,
        shape: Some(s::dropout),
        kernel: Some(k::dropout),
    },
];
