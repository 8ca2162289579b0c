//! The string operators (StringConcat, StringSplit, RegexFullMatch,
//! StringNormalizer) and the text featuriser TfIdfVectorizer.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`string_values`] reads a string tensor.

mod regex_full_match;
mod string_concat;
mod string_normalizer;
mod string_split;
mod string_values;
mod tfidf_vectorizer;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "StringConcat", 20, string_concat),
    op_def!("", "StringSplit", 20, string_split),
    op_def!("", "RegexFullMatch", 20, regex_full_match),
    op_def!("", "StringNormalizer", 10, string_normalizer),
    op_def!("", "TfIdfVectorizer", 9, tfidf_vectorizer),
];
