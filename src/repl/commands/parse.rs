use super::*;

pub(super) fn cmd_parse(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    if t.is_empty() {
        return Err("usage: parse TEXT (the model in ONNX text syntax)".into());
    }
    let model = text::parse_model(t).map_err(|e| CmdError(e.to_string()))?;
    let msg = format!("parsed {}", summary(&model));
    let note = s.set_model(model, "<parse>");
    s.status(msg);
    if let Some(n) = note {
        s.status(n);
    }
    Ok(Flow::Continue)
}
