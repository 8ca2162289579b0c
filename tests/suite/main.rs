//! The integration tests, in one binary: each module was its own test
//! crate, and ~30 binaries each linking the engine cost CI a minute of
//! compiling and linking. Shared helpers live in `common`.

mod common;

mod attribute_types;
mod backend;
mod cli;
mod cli_flags;
mod converter_quirks;
mod debugger;
mod dependencies_used;
mod dump_compare;
mod fuzz_regressions;
mod graph_order;
mod hostile_inputs;
mod layering;
mod ml_domain;
mod ml_tree_ensembles;
mod opset_upgrade;
mod plan_passes;
mod profile_memory;
mod proto_io;
mod pty;
mod random_statistics;
mod real_models;
mod run_errors;
mod shape_agreement;
mod shape_rules;
mod text_syntax;
mod walkthrough;
mod worked_scripts;
mod zero_copy_weights;
