//! Sequence and optional operators.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`sequence_value`] reads and builds the sequence values
//! they share.

mod concat_from_sequence;
mod optional;
mod optional_get_element;
mod optional_has_element;
mod sequence_at;
mod sequence_construct;
mod sequence_empty;
mod sequence_erase;
mod sequence_insert;
mod sequence_length;
mod sequence_map;
mod sequence_value;
mod split_to_sequence;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "SequenceEmpty", 11, sequence_empty),
    op_def!("", "SequenceConstruct", 11, sequence_construct),
    op_def!("", "SequenceInsert", 11, sequence_insert),
    op_def!("", "SequenceAt", 11, sequence_at),
    op_def!("", "SequenceErase", 11, sequence_erase),
    op_def!("", "SequenceLength", 11, sequence_length),
    op_def!("", "SplitToSequence", 11, split_to_sequence),
    op_def!("", "ConcatFromSequence", 11, concat_from_sequence),
    op_def!("", "SequenceMap", 17, sequence_map),
    op_def!("", "Optional", 15, optional),
    op_def!("", "OptionalHasElement", 15, optional_has_element),
    op_def!("", "OptionalGetElement", 15, optional_get_element),
];
