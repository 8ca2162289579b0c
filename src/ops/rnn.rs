//! Recurrent network operators: RNN, GRU, LSTM.

use super::OpDef;
use crate::ops::kernels::rnn as k;
use crate::ops::shape_rules::rnn as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "RNN", since: 1, shape: s::rnn, kernel: k::rnn, deterministic: true },
    OpDef { domain: "", op_type: "GRU", since: 1, shape: s::gru, kernel: k::gru, deterministic: true },
    OpDef { domain: "", op_type: "LSTM", since: 1, shape: s::lstm, kernel: k::lstm, deterministic: true },
];
