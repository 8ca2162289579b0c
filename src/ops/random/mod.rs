//! Random generators: RandomUniform, RandomNormal, their `*Like` forms,
//! Bernoulli and Multinomial. A `seed` attribute makes a node reproducible;
//! without one, each run draws from a per-node stream that advances.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`stream`] holds the random streams, [`generator`] what the
//! four uniform/normal generators share. The table marks every one of them
//! nondeterministic: never folded into a constant, never compared with
//! expected draws.

mod bernoulli;
mod generator;
mod multinomial;
mod random_normal;
mod random_normal_like;
mod random_uniform;
mod random_uniform_like;
mod stream;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "RandomUniform", 1, random_uniform, nondeterministic),
    op_def!("", "RandomNormal", 1, random_normal, nondeterministic),
    op_def!("", "RandomUniformLike", 1, random_uniform_like, nondeterministic),
    op_def!("", "RandomNormalLike", 1, random_normal_like, nondeterministic),
    op_def!("", "Bernoulli", 15, bernoulli, nondeterministic),
    op_def!("", "Multinomial", 7, multinomial, nondeterministic),
];
