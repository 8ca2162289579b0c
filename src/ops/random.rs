//! Random generators.

use super::OpDef;
use crate::ops::kernels::random as k;
use crate::ops::shape_rules::random as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "RandomUniform", since: 1, shape: Some(s::random), kernel: Some(k::random_uniform) },
    OpDef { domain: "", op_type: "RandomNormal", since: 1, shape: Some(s::random), kernel: Some(k::random_normal) },
    OpDef { domain: "", op_type: "RandomUniformLike", since: 1, shape: Some(s::random_like), kernel: Some(k::random_uniform_like) },
    OpDef { domain: "", op_type: "RandomNormalLike", since: 1, shape: Some(s::random_like), kernel: Some(k::random_normal_like) },
    OpDef { domain: "", op_type: "Bernoulli", since: 1, shape: Some(s::random_like), kernel: Some(k::bernoulli) },
    OpDef { domain: "", op_type: "Multinomial", since: 1, shape: Some(s::multinomial), kernel: Some(k::multinomial) },
];
