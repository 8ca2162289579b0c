//! tensor
