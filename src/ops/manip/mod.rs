//! Tensor manipulation and indexing operators: shapes and layouts
//! (Reshape, Transpose, Concat, Slice, Pad, ...), constants and ranges,
//! gathers and scatters, selections (Compress, NonZero, Unique, TopK) and
//! running sums and products.
//!
//! One operator per file: its shape rule (`shape`, with data propagation
//! of small integer tensors where the operator has it) and its kernel
//! builder (`kernel`). `Scatter` is `ScatterElements` under its older name.
//! What several operators share has a file named for it: [`cumulative`]
//! (CumSum, CumProd), [`index_positions`] and [`scatter_reduction`]
//! (gathers and scatters), [`sort_keys`] (Unique, TopK), [`axes_input`]
//! (Squeeze, Unsqueeze, Split), [`symbolic_dims`] and [`transpose_tiled`]
//! (Transpose's block swaps). Index helpers other families use too stay in
//! `kernels/manip.rs`.

mod axes_input;
mod center_crop_pad;
mod compress;
mod concat;
mod constant;
mod constant_of_shape;
mod cum_prod;
mod cum_sum;
mod cumulative;
mod depth_to_space;
mod expand;
mod eye_like;
mod flatten;
mod gather;
mod gather_elements;
mod gather_nd;
mod index_positions;
mod non_zero;
#[cfg(test)]
mod odd_inputs;
mod one_hot;
mod pad;
mod range;
mod reshape;
mod reverse_sequence;
mod scatter_elements;
mod scatter_nd;
mod scatter_reduction;
mod shape;
mod size;
mod slice;
mod sort_keys;
mod space_to_depth;
mod split;
mod squeeze;
mod symbolic_dims;
mod tile;
mod top_k;
mod transpose;
mod transpose_tiled;
mod trilu;
mod unique;
mod unsqueeze;

pub(crate) use concat::concat_tensors;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "Reshape", 1, reshape),
    op_def!("", "Transpose", 1, transpose),
    op_def!("", "Concat", 1, concat),
    op_def!("", "Flatten", 1, flatten),
    op_def!("", "Squeeze", 1, squeeze),
    op_def!("", "Unsqueeze", 1, unsqueeze),
    op_def!("", "Split", 1, split),
    op_def!("", "Slice", 1, slice),
    op_def!("", "Expand", 8, expand),
    op_def!("", "Tile", 1, tile),
    op_def!("", "Pad", 1, pad),
    op_def!("", "Shape", 1, shape),
    op_def!("", "Size", 1, size),
    op_def!("", "ConstantOfShape", 9, constant_of_shape),
    op_def!("", "Constant", 1, constant),
    op_def!("", "Range", 11, range),
    op_def!("", "Trilu", 14, trilu),
    op_def!("", "EyeLike", 9, eye_like),
    op_def!("", "CumSum", 11, cum_sum),
    op_def!("", "ReverseSequence", 10, reverse_sequence),
    op_def!("", "DepthToSpace", 1, depth_to_space),
    op_def!("", "SpaceToDepth", 1, space_to_depth),
    op_def!("", "Gather", 1, gather),
    op_def!("", "GatherElements", 11, gather_elements),
    op_def!("", "GatherND", 11, gather_nd),
    op_def!("", "ScatterElements", 11, scatter_elements),
    op_def!("", "Scatter", 9, scatter_elements),
    op_def!("", "ScatterND", 11, scatter_nd),
    op_def!("", "OneHot", 9, one_hot),
    op_def!("", "Compress", 9, compress),
    op_def!("", "NonZero", 9, non_zero),
    op_def!("", "Unique", 11, unique),
    op_def!("", "TopK", 1, top_k),
    op_def!("", "CumProd", 26, cum_prod),
    op_def!("", "CenterCropPad", 18, center_crop_pad),
];
