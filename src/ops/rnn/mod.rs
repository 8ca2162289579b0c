//! Recurrent networks: RNN, GRU, LSTM.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`); the three share one engine, [`recurrent`] (the attributes
//! decoded once into a `Spec`, the cells, the sequence loop).

mod gru;
mod lstm;
mod recurrent;
// the operator is named like its family
#[allow(clippy::module_inception)]
mod rnn;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "RNN", 7, rnn),
    op_def!("", "GRU", 7, gru),
    op_def!("", "LSTM", 7, lstm),
];
