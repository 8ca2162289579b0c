//! Symbolic dimension expressions: parse, simplify, evaluate, compare.
