//! The operator table.
