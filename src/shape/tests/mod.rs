//! Tests of the shape rules (`ops/shape_rules/`) run through the engine
//! ([`super::infer_model`]) on small models.

mod elementwise;
mod manip;
mod nn;
