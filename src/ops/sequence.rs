//! Sequence and optional operators.

use super::OpDef;
use crate::ops::kernels::sequence as k;
use crate::ops::shape_rules::sequence as s;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "SequenceEmpty", since: 1, shape: s::sequence_empty, kernel: k::sequence_empty, deterministic: true },
    OpDef { domain: "", op_type: "SequenceConstruct", since: 1, shape: s::sequence_construct, kernel: k::sequence_construct, deterministic: true },
    OpDef { domain: "", op_type: "SequenceInsert", since: 1, shape: s::sequence_insert, kernel: k::sequence_insert, deterministic: true },
    OpDef { domain: "", op_type: "SequenceAt", since: 1, shape: s::sequence_at, kernel: k::sequence_at, deterministic: true },
    OpDef { domain: "", op_type: "SequenceErase", since: 1, shape: s::sequence_erase, kernel: k::sequence_erase, deterministic: true },
    OpDef { domain: "", op_type: "SequenceLength", since: 1, shape: s::sequence_length, kernel: k::sequence_length, deterministic: true },
    OpDef { domain: "", op_type: "SplitToSequence", since: 1, shape: s::split_to_sequence, kernel: k::split_to_sequence, deterministic: true },
    OpDef { domain: "", op_type: "ConcatFromSequence", since: 1, shape: s::concat_from_sequence, kernel: k::concat_from_sequence, deterministic: true },
    OpDef { domain: "", op_type: "SequenceMap", since: 1, shape: s::sequence_map, kernel: k::sequence_map, deterministic: true },
    OpDef { domain: "", op_type: "Optional", since: 1, shape: s::optional, kernel: k::optional, deterministic: true },
    OpDef { domain: "", op_type: "OptionalHasElement", since: 1, shape: s::optional_has_element, kernel: k::optional_has_element, deterministic: true },
    OpDef { domain: "", op_type: "OptionalGetElement", since: 1, shape: s::optional_get_element, kernel: k::optional_get_element, deterministic: true },
    OpDef { domain: "", op_type: "StringNormalizer", since: 1, shape: s::string_normalizer, kernel: k::string_normalizer, deterministic: true },
];
