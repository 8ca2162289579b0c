//! Bounds on what one run may cost besides memory (see
//! [`crate::tensor::budget`] for memory): Loop and Scan iterations, and the
//! number of events recorded. Set by `config max-iterations` and
//! `config max-events`; process-wide, like the memory budget.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Iterations one Loop or Scan node may run, by default.
pub const DEFAULT_MAX_ITERATIONS: u64 = 10_000_000;
/// Events one run may record, by default.
pub const DEFAULT_MAX_EVENTS: usize = 1_000_000;

static MAX_ITERATIONS: AtomicU64 = AtomicU64::new(DEFAULT_MAX_ITERATIONS);
static MAX_EVENTS: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_EVENTS);
static DROPPED_EVENTS: AtomicUsize = AtomicUsize::new(0);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// A debugged run is active: its hook turns a Ctrl-C into a stop at the
/// next node, so Loop/Scan iterations leave the Ctrl-C to it.
static PAUSE_ON_INTERRUPT: AtomicBool = AtomicBool::new(false);
/// Iterations that saw a Ctrl-C the debugger's hook has not taken yet.
static UNTAKEN_INTERRUPTS: AtomicU64 = AtomicU64::new(0);
/// Iterations a Ctrl-C waits for the hook (a body without nodes never
/// reaches it) before the Loop stops with an error as without a debugger.
const MAX_UNTAKEN_INTERRUPTS: u64 = 1000;

/// Whether a debugged run is active (set by the shell's `run`).
pub fn set_pause_on_interrupt(on: bool) {
    PAUSE_ON_INTERRUPT.store(on, Ordering::Relaxed);
    UNTAKEN_INTERRUPTS.store(0, Ordering::Relaxed);
}

/// Asks the running command to stop (Ctrl-C); async-signal-safe, so a
/// SIGINT handler may call it. Runs stop between nodes and between Loop
/// or Scan iterations; one kernel call is not cut short.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Whether a stop was asked since the last [`clear_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Forgets an earlier Ctrl-C (before each command).
pub fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::Relaxed);
    UNTAKEN_INTERRUPTS.store(0, Ordering::Relaxed);
}

pub fn max_iterations() -> u64 {
    MAX_ITERATIONS.load(Ordering::Relaxed)
}

pub fn set_max_iterations(n: u64) {
    MAX_ITERATIONS.store(n.max(1), Ordering::Relaxed);
}

pub fn max_events() -> usize {
    MAX_EVENTS.load(Ordering::Relaxed)
}

pub fn set_max_events(n: usize) {
    MAX_EVENTS.store(n.max(1), Ordering::Relaxed);
}

/// Refuses iteration `i` (counted from 0) of a Loop or Scan past the bound.
/// Also stops at a Ctrl-C.
pub fn check_iteration(i: u64, what: &str) -> Result<(), String> {
    if interrupted()
        && !(PAUSE_ON_INTERRUPT.load(Ordering::Relaxed)
            && UNTAKEN_INTERRUPTS.fetch_add(1, Ordering::Relaxed) < MAX_UNTAKEN_INTERRUPTS)
    {
        return Err(format!("{what} interrupted (Ctrl-C) at iteration {i}"));
    }
    let max = max_iterations();
    if i >= max {
        return Err(format!(
            "{what} reached {max} iterations, the bound set by `config max-iterations`"
        ));
    }
    Ok(())
}

/// Counts an event the log had no room for.
pub(crate) fn drop_event() {
    DROPPED_EVENTS.fetch_add(1, Ordering::Relaxed);
}

/// Events dropped since the last call (and resets the count).
pub fn take_dropped_events() -> usize {
    DROPPED_EVENTS.swap(0, Ordering::Relaxed)
}

/// What a caught panic said (its `&str` or `String` payload).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_past_the_bound_are_refused() {
        assert!(check_iteration(0, "Loop").is_ok());
        let e = check_iteration(u64::MAX, "Loop").unwrap_err();
        assert!(e.contains("max-iterations"), "{e}");
    }
}
