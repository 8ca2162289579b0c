//! Image operators: Resize, Upsample, NonMaxSuppression, RoiAlign,
//! GridSample, AffineGrid, ImageDecoder.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`resampling`] holds the interpolation Resize and Upsample
//! share (and the cubic kernel and type conversion the samplers use);
//! ImageDecoder's baseline JPEG decoder is [`jpeg_sequential`].

mod affine_grid;
mod grid_sample;
mod image_decoder;
mod jpeg_sequential;
mod non_max_suppression;
mod resampling;
mod resize;
mod roi_align;
mod upsample;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "Resize", 10, resize),
    op_def!("", "Upsample", 7, upsample),
    op_def!("", "NonMaxSuppression", 10, non_max_suppression),
    op_def!("", "RoiAlign", 10, roi_align),
    op_def!("", "GridSample", 16, grid_sample),
    op_def!("", "ImageDecoder", 20, image_decoder),
    op_def!("", "AffineGrid", 20, affine_grid),
];
