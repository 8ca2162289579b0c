//! onnx-light: an interactive shell for ONNX models.
//!
//! The library holds the engine; the `onnx-light` binary is a thin shell over
//! [`repl`]. One module per concern:
//! - [`files`]: reading and writing the user's files safely (regular files only,
//!   atomic replacement through symlinks);
//! - [`proto`]: ONNX protobuf types and binary load/save, external data,
//!   TensorProto conversion;
//! - [`text`]: the ONNX text syntax (parser, canonical printer, pretty summary);
//! - [`expr`]: symbolic dimension expressions;
//! - [`graph`]: what a graph means, computed once: opsets, node labels, order;
//! - [`shape`]: shape inference;
//! - [`value_type`]: the type of a value as inference knows it (`TypeInfo`, `Dim`);
//! - [`tensor`]: the tensor type, its byte form, zero-copy weights;
//! - [`runtime`]: plan, plan-time passes, executor, event log;
//! - [`ops`]: the operator table: op types, typed attributes, shape rules,
//!   kernels and their interface;
//! - [`repl`]: the shell.

pub mod expr;
pub mod files;
pub mod graph;
pub mod ops;
pub mod proto;
pub mod repl;
pub mod runtime;
pub mod shape;
pub mod tensor;
pub mod text;
pub mod value_type;

/// Every heap allocation is counted, so the memory budget
/// ([`tensor::budget`]) knows what is in use.
#[global_allocator]
static ALLOC: tensor::budget::CountingAlloc = tensor::budget::CountingAlloc;
