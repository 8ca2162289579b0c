//! Recurrent network and image operators.

use super::OpDef;

pub const TABLE: &[OpDef] = &[];
