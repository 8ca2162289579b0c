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
pub mod heap;
mod inline;

mod passes;
mod plan;
pub mod random_draws;
pub mod tolerance;
pub mod usage;

#[cfg(test)]
mod control_flow_tests;

pub use crate::ops::kernel::{Kernel, KernelBuilder, KernelError, NodeInfo, RunCtx};
pub use events::{Event, EventAction, EventKind, EventNode};
// the kernel interface and the kernels moved to ops/; these names keep
// the plan, the passes and the shell's paths working
pub use crate::ops::{kernel, kernels, limits};
pub use plan::{
    Plan, PlanError, PlanRow, PlannedNode, RunError, RunOptions, RunResult, ValueObserver,
};
