//! String operators: StringConcat, StringSplit, RegexFullMatch,
//! TfIdfVectorizer.

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "StringConcat", since: 1, shape: crate::ops::shape_rules::strings::string_concat, kernel: crate::ops::kernels::strings::string_concat, deterministic: true },
    OpDef { domain: "", op_type: "StringSplit", since: 1, shape: crate::ops::shape_rules::strings::string_split, kernel: crate::ops::kernels::strings::string_split, deterministic: true },
    OpDef { domain: "", op_type: "RegexFullMatch", since: 1, shape: crate::ops::shape_rules::strings::regex_full_match, kernel: crate::ops::kernels::strings::regex_full_match, deterministic: true },
    OpDef { domain: "", op_type: "TfIdfVectorizer", since: 1, shape: crate::ops::shape_rules::strings::tfidf_vectorizer, kernel: crate::ops::kernels::strings::tfidf_vectorizer, deterministic: true },
];
