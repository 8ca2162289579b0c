//! What a graph means, computed once from its protobuf: the opset each
//! domain resolves to ([`Opsets`]), how a node is named in messages
//! ([`NodeLabel`]), the names a node reads from enclosing scopes through its
//! subgraphs ([`implicit_inputs`]), and the order nodes run in with the last
//! reader of every intermediate ([`Schedule`]).
//!
//! The shape engine, the plan and the plan-time passes all read a graph
//! through this module, so they agree on order and on names. It sits above
//! `proto` (it reads `GraphProto`/`NodeProto`) and below every engine; it
//! knows nothing about operators.

mod label;
mod opsets;
mod order;

pub use label::NodeLabel;
pub use opsets::Opsets;
pub use order::{implicit_inputs, OrderError, Schedule};
