//! Recurrent network and image operators.

use super::{image_decoder, OpDef};
use crate::ops::shape_rules::misc as s;
use crate::runtime::kernels::{image as ki, rnn as kr};

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "RNN", since: 1, shape: Some(s::rnn), kernel: Some(kr::rnn) },
    OpDef { domain: "", op_type: "GRU", since: 1, shape: Some(s::gru), kernel: Some(kr::gru) },
    OpDef { domain: "", op_type: "LSTM", since: 1, shape: Some(s::lstm), kernel: Some(kr::lstm) },
    OpDef { domain: "", op_type: "Resize", since: 1, shape: Some(s::resize), kernel: Some(ki::resize) },
    OpDef { domain: "", op_type: "Upsample", since: 1, shape: Some(s::upsample), kernel: Some(ki::upsample) },
    OpDef { domain: "", op_type: "NonMaxSuppression", since: 1, shape: Some(s::non_max_suppression), kernel: Some(ki::non_max_suppression) },
    OpDef { domain: "", op_type: "RoiAlign", since: 1, shape: Some(s::roi_align), kernel: Some(ki::roi_align) },
    OpDef { domain: "", op_type: "GridSample", since: 1, shape: Some(s::grid_sample), kernel: Some(ki::grid_sample) },
    OpDef { domain: "", op_type: "ImageDecoder", since: 20, shape: Some(image_decoder::shape), kernel: Some(image_decoder::kernel) },
    OpDef { domain: "", op_type: "AffineGrid", since: 1, shape: Some(s::affine_grid), kernel: Some(ki::affine_grid) },
];
