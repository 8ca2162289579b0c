//! The kernel runtime: a plan built once per model (topological order,
//! kernels chosen from the operator table, attributes decoded once, each
//! value's last consumer), the executor, the event log and release of
//! intermediates.

pub mod break_condition;
pub mod compare;
pub mod conformance;
pub mod debug;
pub mod dump;
pub mod events;
mod inline;
pub mod kernel;
pub mod kernels;
pub mod limits;
mod passes;
mod plan;
pub mod random_draws;
pub mod tolerance;
pub mod usage;

pub use events::{Event, EventAction, EventKind, EventNode};
pub use kernel::{Kernel, KernelBuilder, KernelError, NodeInfo, RunCtx};
pub use plan::{
    Plan, PlanError, PlanRow, PlannedNode, RunError, RunOptions, RunResult, ValueObserver,
};
