use super::*;

pub(super) fn cmd_unlet(s: &mut Session, a: &Args) -> R<Flow> {
    let name = unquote_name(&a.rest).map_err(anyhow::Error::msg)?;
    let name = name.as_str();
    if s.bindings.remove(name).is_none() {
        bail!("'{name}' is not bound");
    }
    s.auto_bound.remove(name);
    s.status(format!("unbound {name}"));
    Ok(Flow::Continue)
}
