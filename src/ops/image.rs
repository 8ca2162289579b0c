//! Image operators: Resize, Upsample, NonMaxSuppression, RoiAlign,
//! GridSample, ImageDecoder, AffineGrid.

use super::{image_decoder, OpDef};
use crate::ops::kernels::image as k;
use crate::ops::shape_rules::image as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "Resize", since: 1, shape: s::resize, kernel: k::resize, deterministic: true },
    OpDef { domain: "", op_type: "Upsample", since: 1, shape: s::upsample, kernel: k::upsample, deterministic: true },
    OpDef { domain: "", op_type: "NonMaxSuppression", since: 1, shape: s::non_max_suppression, kernel: k::non_max_suppression, deterministic: true },
    OpDef { domain: "", op_type: "RoiAlign", since: 1, shape: s::roi_align, kernel: k::roi_align, deterministic: true },
    OpDef { domain: "", op_type: "GridSample", since: 1, shape: s::grid_sample, kernel: k::grid_sample, deterministic: true },
    OpDef { domain: "", op_type: "ImageDecoder", since: 20, shape: image_decoder::shape, kernel: image_decoder::kernel, deterministic: true },
    OpDef { domain: "", op_type: "AffineGrid", since: 1, shape: s::affine_grid, kernel: k::affine_grid, deterministic: true },
];
