//! The tables of every operator family, chained.

use super::OpDef;

pub fn all() -> impl Iterator<Item = &'static OpDef> {
    [
        super::elementwise::TABLE,
        super::manip::TABLE,
        super::reduce::TABLE,
        super::linalg::TABLE,
        super::nn::TABLE,
        super::control::TABLE,
        super::sequence::TABLE,
        super::rnn::TABLE,
        super::image::TABLE,
        super::attention::TABLE,
        super::loss::TABLE,
        super::training::TABLE,
        super::signal::TABLE,
        super::strings::TABLE,
        super::ml::TABLE,
        super::random::TABLE,
    ]
    .into_iter()
    .flat_map(|t| t.iter())
}
