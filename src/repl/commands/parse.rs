use super::*;

pub(super) fn cmd_parse(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    let model = text::parse_model(t)?;
    let msg = format!("parsed {}", summary(&model));
    let note = s.set_model(model, "<parse>");
    s.status(msg);
    if let Some(n) = note {
        s.status(n);
    }
    Ok(Flow::Continue)
}
