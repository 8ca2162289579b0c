use super::*;

pub(super) fn cmd_quit(_: &mut Session, _: &Args) -> R<Flow> {
    Ok(Flow::Quit)
}
