use super::*;

pub(super) fn cmd_unlet(s: &mut Session, a: &Args) -> R<Flow> {
    let name = unquote_name(&a.rest).map_err(CmdError)?;
    let name = name.as_str();
    if s.bindings.remove(name).is_none() {
        return Err(CmdError(format!("'{name}' is not bound")));
    }
    s.auto_bound.remove(name);
    s.status(format!("unbound {name}"));
    Ok(Flow::Continue)
}
