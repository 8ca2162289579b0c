//! Random generators.

use super::OpDef;
use crate::ops::kernels::random as k;
use crate::ops::shape_rules::random as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "RandomUniform", since: 1, shape: s::random, kernel: k::random_uniform, deterministic: false },
    OpDef { domain: "", op_type: "RandomNormal", since: 1, shape: s::random, kernel: k::random_normal, deterministic: false },
    OpDef { domain: "", op_type: "RandomUniformLike", since: 1, shape: s::random_like, kernel: k::random_uniform_like, deterministic: false },
    OpDef { domain: "", op_type: "RandomNormalLike", since: 1, shape: s::random_like, kernel: k::random_normal_like, deterministic: false },
    OpDef { domain: "", op_type: "Bernoulli", since: 1, shape: s::random_like, kernel: k::bernoulli, deterministic: false },
    OpDef { domain: "", op_type: "Multinomial", since: 1, shape: s::multinomial, kernel: k::multinomial, deterministic: false },
];
