//! What a graph means, computed once from its protobuf: the opset each
//! domain resolves to ([`Opsets`]), how a node is named in messages
//! ([`NodeLabel`]), the names a node reads from enclosing scopes through its
//! subgraphs ([`implicit_inputs`]), the order nodes run in with the last
//! reader of every intermediate ([`Schedule`]), and the newest form of a
//! node written in an old operator form ([`upgrade`]).
//!
//! The shape engine, the plan and the plan-time passes all read a graph
//! through this module, so they agree on order and on names. It sits above
//! `proto` (it reads `GraphProto`/`NodeProto`) and below every engine; it
//! knows operators only as far as their attribute forms (`upgrade`).

mod label;
mod opsets;
mod order;
mod upgrade;

pub use label::NodeLabel;
pub use opsets::Opsets;
pub use order::{implicit_inputs, OrderError, Schedule};
pub use upgrade::{is_local, upgrade, LocalConst, Upgraded};
