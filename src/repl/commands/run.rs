use super::*;

pub(super) fn cmd_run(s: &mut Session, a: &Args) -> R<Flow> {
    s.model()?;
    assignments(s, a)?;
    let p = plan(s)?;
    let inputs = feed(s, &p)?;
    bind_from_inputs(s)?;
    let release = if a.has("release") {
        true
    } else if a.has("no-release") {
        false
    } else {
        s.config.release
    };
    let opts = RunOptions {
        events: s.config.events,
        release,
        max_values: s.config.max_values,
        ..Default::default()
    };
    crate::repl::debugger::start(s, p, inputs, opts)
}
