//! Recurrent network operators: RNN, GRU, LSTM.

use super::OpDef;
use crate::ops::kernels::rnn as k;
use crate::ops::shape_rules::rnn as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "RNN", since: 1, shape: Some(s::rnn), kernel: Some(k::rnn) },
    OpDef { domain: "", op_type: "GRU", since: 1, shape: Some(s::gru), kernel: Some(k::gru) },
    OpDef { domain: "", op_type: "LSTM", since: 1, shape: Some(s::lstm), kernel: Some(k::lstm) },
];
