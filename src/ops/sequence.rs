//! Sequence and optional operators.

use super::OpDef;
use crate::ops::kernels::sequence as k;
use crate::ops::shape_rules::sequence as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "SequenceEmpty", since: 1, shape: Some(s::sequence_empty), kernel: Some(k::sequence_empty) },
    OpDef { domain: "", op_type: "SequenceConstruct", since: 1, shape: Some(s::sequence_construct), kernel: Some(k::sequence_construct) },
    OpDef { domain: "", op_type: "SequenceInsert", since: 1, shape: Some(s::sequence_insert), kernel: Some(k::sequence_insert) },
    OpDef { domain: "", op_type: "SequenceAt", since: 1, shape: Some(s::sequence_at), kernel: Some(k::sequence_at) },
    OpDef { domain: "", op_type: "SequenceErase", since: 1, shape: Some(s::sequence_erase), kernel: Some(k::sequence_erase) },
    OpDef { domain: "", op_type: "SequenceLength", since: 1, shape: Some(s::sequence_length), kernel: Some(k::sequence_length) },
    OpDef { domain: "", op_type: "SplitToSequence", since: 1, shape: Some(s::split_to_sequence), kernel: Some(k::split_to_sequence) },
    OpDef { domain: "", op_type: "ConcatFromSequence", since: 1, shape: Some(s::concat_from_sequence), kernel: Some(k::concat_from_sequence) },
    OpDef { domain: "", op_type: "SequenceMap", since: 1, shape: Some(s::sequence_map), kernel: Some(k::sequence_map) },
    OpDef { domain: "", op_type: "Optional", since: 1, shape: Some(s::optional), kernel: Some(k::optional) },
    OpDef { domain: "", op_type: "OptionalHasElement", since: 1, shape: Some(s::optional_has_element), kernel: Some(k::optional_has_element) },
    OpDef { domain: "", op_type: "OptionalGetElement", since: 1, shape: Some(s::optional_get_element), kernel: Some(k::optional_get_element) },
    OpDef { domain: "", op_type: "StringNormalizer", since: 1, shape: Some(s::string_normalizer), kernel: Some(k::string_normalizer) },
];
