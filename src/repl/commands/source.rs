use super::*;

pub(super) fn cmd_source(s: &mut Session, a: &Args) -> R<Flow> {
    let p = path_arg(a, 0);
    if s.source_depth >= 16 {
        bail!("{p}: 'source' nested more than 16 deep (does a script source itself?)");
    }
    let text = crate::repl::read_script(Path::new(&p))?;
    let saved = std::mem::take(&mut s.out);
    s.source_depth += 1;
    let mut collected = saved;
    let mut errs = String::new();
    let mut notes = String::new();
    let (end, _) = {
        let mut print = |o: &str| {
            if !collected.is_empty() && !collected.ends_with('\n') {
                collected.push('\n');
            }
            collected.push_str(o);
        };
        let mut eprint = |o: &str| {
            errs.push_str(o);
            errs.push('\n');
        };
        let mut status = |o: &str| {
            notes.push_str(o);
            notes.push('\n');
        };
        let out = crate::repl::ScriptOutput {
            print: &mut print,
            status: &mut status,
            eprint: &mut eprint,
        };
        crate::repl::run_script(s, &p, &text, false, out)
    };
    s.source_depth -= 1;
    s.out = collected;
    s.status(notes.trim_end());
    match end {
        crate::repl::ScriptEnd::Failed(msg) => {
            // the message names the sourced file's line; the caller adds
            // where it was sourced from
            s.error_located = true;
            Err(anyhow!(msg))
        }
        crate::repl::ScriptEnd::Quit => Ok(Flow::Quit),
        crate::repl::ScriptEnd::Done => Ok(Flow::Continue),
    }
}
