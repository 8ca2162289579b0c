use super::*;

pub(super) fn cmd_set(s: &mut Session, a: &Args) -> R<Flow> {
    let (name, expr) =
        split_assignment(&a.rest).ok_or_else(|| usage_error("set", "expected NAME = TENSOR"))?;
    set_input(s, &name, &expr)?;
    let desc = s
        .inputs
        .get(&name)
        .map(|v| v.describe())
        .unwrap_or_default();
    s.status(format!("{} = {desc}", quote_name(&name)));
    Ok(Flow::Continue)
}
