use super::*;

pub(super) fn cmd_help(s: &mut Session, a: &Args) -> R<Flow> {
    let topic = a.rest.trim();
    // wrapped to the terminal (75 columns when not a terminal)
    let width = crate::repl::line_width(&s.config);
    let wrap = |text: &str, first: &str, rest: &str| -> String {
        let opts = textwrap::Options::new(width)
            .initial_indent(first)
            .subsequent_indent(rest)
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        textwrap::fill(text, opts)
    };
    if topic.is_empty() {
        let usages: Vec<String> = COMMANDS.iter().map(|c| c.usage()).collect();
        let w = usages.iter().map(|u| u.len()).max().unwrap_or(0);
        let mut lines = vec!["commands:".to_string()];
        for (c, usage) in COMMANDS.iter().zip(&usages) {
            let first = c
                .help
                .split(". ")
                .next()
                .unwrap_or(c.help)
                .trim_end_matches('.');
            // usage and summary side by side when they fit, else the
            // summary on the next lines, indented
            if 2 + w + 2 + first.len() <= width {
                lines.push(format!("  {usage:<w$}  {first}"));
            } else {
                lines.push(format!("  {usage}"));
                lines.push(wrap(first, "      ", "      "));
            }
        }
        lines.push(String::new());
        lines.push(wrap(
            "'help COMMAND' for details; data commands take --format table|json|csv and --out FILE.",
            "",
            "",
        ));
        s.say(lines.join("\n"));
        return Ok(Flow::Continue);
    }
    let c = find(topic).ok_or_else(|| {
        anyhow!(match suggest(topic) {
            Some(x) => format!("unknown command '{topic}'; did you mean '{x}'?"),
            None => format!("unknown command '{topic}'"),
        })
    })?;
    let mut lines = vec![
        format!("usage: {}", c.usage()),
        String::new(),
        wrap(c.help, "", ""),
    ];
    if !c.aliases.is_empty() {
        lines.push(format!("aliases: {}", c.aliases.join(", ")));
    }
    // each argument and flag with its help, from the signature
    if !c.sig.positionals.is_empty() {
        lines.push(String::new());
        lines.push("arguments:".into());
        for p in c.sig.positionals {
            let how = match p.arity {
                Arity::Required => "",
                Arity::Optional => " (optional)",
                Arity::Repeated => " (any number)",
                Arity::OneOrMore => " (one or more)",
            };
            lines.push(wrap(
                &format!("{:<28} {}{how}", p.name, p.help),
                "  ",
                &" ".repeat(31),
            ));
        }
    }
    if !c.sig.flags.is_empty() {
        lines.push(String::new());
        lines.push("flags:".into());
        for f in c.sig.flags {
            let head = match f.value {
                Some(v) => format!("--{} {v}", f.name),
                None => format!("--{}", f.name),
            };
            lines.push(wrap(
                &format!("{head:<28} {}", f.help),
                "  ",
                &" ".repeat(31),
            ));
        }
    }
    s.say(lines.join("\n"));
    Ok(Flow::Continue)
}
