//! Image operators: Resize, Upsample, NonMaxSuppression, RoiAlign,
//! GridSample, ImageDecoder, AffineGrid.

use super::{image_decoder, OpDef};
use crate::ops::kernels::image as k;
use crate::ops::shape_rules::image as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "Resize", since: 1, shape: Some(s::resize), kernel: Some(k::resize) },
    OpDef { domain: "", op_type: "Upsample", since: 1, shape: Some(s::upsample), kernel: Some(k::upsample) },
    OpDef { domain: "", op_type: "NonMaxSuppression", since: 1, shape: Some(s::non_max_suppression), kernel: Some(k::non_max_suppression) },
    OpDef { domain: "", op_type: "RoiAlign", since: 1, shape: Some(s::roi_align), kernel: Some(k::roi_align) },
    OpDef { domain: "", op_type: "GridSample", since: 1, shape: Some(s::grid_sample), kernel: Some(k::grid_sample) },
    OpDef { domain: "", op_type: "ImageDecoder", since: 20, shape: Some(image_decoder::shape), kernel: Some(image_decoder::kernel) },
    OpDef { domain: "", op_type: "AffineGrid", since: 1, shape: Some(s::affine_grid), kernel: Some(k::affine_grid) },
];
