use super::*;

pub(super) fn cmd_show(s: &mut Session, a: &Args) -> R<Flow> {
    if a.has("plan") {
        let t = plan(s)?.describe_plan();
        s.say(t.trim_end());
        return Ok(Flow::Continue);
    }
    let m = s.model()?;
    let t = if a.has("text") {
        text_size_ok(m, "'save PATH.txt --external-threshold BYTES' writes its text with large tensors in a data file")?;
        text::print_model(m)
    } else {
        text::pretty(m)
    };
    s.say(t.trim_end());
    Ok(Flow::Continue)
}
