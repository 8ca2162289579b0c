//! Tensor manipulation operators.

use super::OpDef;
use crate::ops::kernels::index as x;
use crate::ops::kernels::manip as k;
use crate::ops::shape_rules::manip as s;

macro_rules! op {
    ($name:literal, $shape:expr, $kernel:expr) => {
        OpDef {
            domain: "",
            op_type: $name,
            since: 1,
            shape: $shape,
            kernel: $kernel,
            deterministic: true,
        }
    };
}

pub const TABLE: &[OpDef] = &[
    op!("Reshape", s::reshape, k::reshape),
    op!("Transpose", s::transpose, k::transpose),
    op!("Concat", s::concat, k::concat),
    op!("Flatten", s::flatten, k::flatten),
    op!("Squeeze", s::squeeze, k::squeeze),
    op!("Unsqueeze", s::unsqueeze, k::unsqueeze),
    op!("Split", s::split, k::split),
    op!("Slice", s::slice, k::slice),
    op!("Expand", s::expand, k::expand),
    op!("Tile", s::tile, k::tile),
    op!("Pad", s::pad, k::pad),
    op!("Shape", s::shape_op, k::shape),
    op!("Size", s::size, k::size),
    op!(
        "ConstantOfShape",
        s::constant_of_shape,
        k::constant_of_shape
    ),
    op!("Constant", s::constant, k::constant),
    op!("Range", s::range, k::range),
    op!("Trilu", s::same_as_input, k::trilu),
    op!("EyeLike", s::eye_like, k::eye_like),
    op!("CumSum", s::same_as_input, k::cumsum),
    op!("ReverseSequence", s::same_as_input, k::reverse_sequence),
    op!("DepthToSpace", s::depth_to_space, k::depth_to_space),
    op!("SpaceToDepth", s::space_to_depth, k::space_to_depth),
    op!("Gather", s::gather, x::gather),
    op!("GatherElements", s::gather_elements, x::gather_elements),
    op!("GatherND", s::gather_nd, x::gather_nd),
    op!("ScatterElements", s::same_as_input, x::scatter_elements),
    op!("Scatter", s::same_as_input, x::scatter_elements),
    op!("ScatterND", s::same_as_input, x::scatter_nd),
    op!("OneHot", s::one_hot, x::one_hot),
    op!("Compress", s::compress, x::compress),
    op!("NonZero", s::non_zero, x::non_zero),
    op!("Unique", s::unique, x::unique),
    op!("TopK", s::top_k, x::top_k),
    OpDef {
        domain: "",
        op_type: "CumProd",
        since: 1,
        shape: crate::ops::shape_rules::same_as_input,
        kernel: crate::ops::kernels::cum_prod::cum_prod,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "CenterCropPad",
        since: 1,
        shape: crate::ops::shape_rules::center_crop_pad::center_crop_pad,
        kernel: crate::ops::kernels::center_crop_pad::center_crop_pad,
        deterministic: true,
    },
];
