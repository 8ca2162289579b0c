//! Small lexical helpers shared by the shell: bracket balance (for
//! multi-line input), comment stripping, top-level splitting.

/// Counts unclosed `(`, `[`, `{` over text fed in pieces, ignoring strings
/// and `#` comments (both end at a newline), so a long multi-line command
/// is scanned once, not once per added line.
#[derive(Clone, Debug, Default)]
pub struct Brackets {
    depth: i64,
    in_str: Option<char>,
    escaped: bool,
    comment: bool,
}

impl Brackets {
    /// Scans more text.
    pub fn feed(&mut self, text: &str) {
        for c in text.chars() {
            if self.comment {
                if c == '\n' {
                    self.comment = false;
                }
                continue;
            }
            if let Some(q) = self.in_str {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == q || c == '\n' {
                    self.in_str = None;
                }
                continue;
            }
            match c {
                '"' | '\'' => self.in_str = Some(c),
                '#' => self.comment = true,
                '(' | '[' | '{' => self.depth += 1,
                ')' | ']' | '}' => self.depth -= 1,
                _ => {}
            }
        }
    }

    /// Unclosed brackets so far; negative when there are more closers.
    pub fn depth(&self) -> i64 {
        self.depth
    }
}

/// Depth of unclosed `(`, `[`, `{` in `text`, ignoring strings and `#`
/// comments. Negative when there are more closers.
pub fn bracket_depth(text: &str) -> i64 {
    let mut b = Brackets::default();
    b.feed(text);
    b.depth()
}

/// True when a command needs more lines: its brackets are unclosed, or it
/// is a `parse` whose model text stops before the model ends (the parser
/// reached the end of the text).
pub fn is_incomplete(text: &str) -> bool {
    needs_more(text, bracket_depth(text))
}

/// [`is_incomplete`] for a text whose bracket depth is already known.
pub fn needs_more(text: &str, depth: i64) -> bool {
    if depth > 0 {
        return true;
    }
    let t = text.trim_start();
    let Some(body) = t.strip_prefix("parse") else {
        return false;
    };
    if !(body.is_empty() || body.starts_with(char::is_whitespace)) {
        return false;
    }
    if body.trim().is_empty() {
        return true;
    }
    match crate::text::parse_model(body) {
        Ok(_) => false,
        Err(e) => e.message.contains("found the end of the text"),
    }
}

/// Removes a `#` comment (outside strings) from the end of a line.
pub fn strip_comment(line: &str) -> &str {
    let mut in_str: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if let Some(q) = in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_str = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => in_str = Some(c),
            '#' => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Splits at `sep` characters that are outside brackets and strings.
pub fn split_top(text: &str, sep: impl Fn(char) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i64;
    let mut in_str: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = in_str {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_str = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                in_str = Some(c);
                cur.push(c);
            }
            '(' | '[' | '{' => {
                depth += 1;
                cur.push(c);
            }
            ')' | ']' | '}' => {
                depth -= 1;
                cur.push(c);
            }
            c if depth <= 0 && sep(c) => {
                out.push(std::mem::take(&mut cur));
            }
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Whitespace-separated top-level tokens (brackets and strings kept whole).
pub fn tokens(text: &str) -> Vec<String> {
    split_top(text, char::is_whitespace)
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect()
}

/// A value name: a plain identifier, or a double-quoted string.
pub fn unquote_name(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        let inner = &s[1..s.len() - 1];
        return Ok(inner.replace("\\\"", "\"").replace("\\\\", "\\"));
    }
    if s.is_empty() {
        return Err("expected a name".into());
    }
    if s.starts_with('"') {
        return Err(format!("unterminated quoted name {s}"));
    }
    Ok(s.to_string())
}

/// Writes a name so that [`unquote_name`] reads it back.
pub fn quote_name(s: &str) -> String {
    if crate::expr::is_identifier(s) {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Splits `NAME=VALUE` at the first top-level `=`, honouring a quoted name.
pub fn split_assignment(s: &str) -> Option<(String, String)> {
    let s = s.trim();
    let end_of_name = if let Some(rest) = s.strip_prefix('"') {
        let mut escaped = false;
        let mut close = None;
        for (i, c) in rest.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                close = Some(i + 2);
                break;
            }
        }
        close?
    } else {
        s.find('=')?
    };
    let (name, rest) = s.split_at(end_of_name);
    let rest = rest.trim_start();
    let value = rest.strip_prefix('=')?;
    Some((unquote_name(name.trim()).ok()?, value.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance() {
        assert!(is_incomplete("parse agraph (float[N] x) => (y) {"));
        assert!(!is_incomplete("parse a { y = Op(x) }"));
        assert!(!is_incomplete("eval \"(\""));
        assert!(!is_incomplete("eval 1 # ("));
        assert!(is_incomplete("parse <ir_version: 10>"));
        assert!(is_incomplete(
            "parse <ir_version: 10>\nagraph (float[N] x) => (y)"
        ));
        assert!(!is_incomplete(
            "parse g (float[N] x) => (y) { y = Relu(x) }"
        ));
    }

    #[test]
    fn assignments() {
        assert_eq!(
            split_assignment("x=arange(8).reshape(2,4)"),
            Some(("x".into(), "arange(8).reshape(2,4)".into()))
        );
        assert_eq!(
            split_assignment("\"gpu_0/data_0\"=rand(1,3)"),
            Some(("gpu_0/data_0".into(), "rand(1,3)".into()))
        );
        assert_eq!(
            tokens("x=[1, 2] --release y=full([2], 3)"),
            vec!["x=[1, 2]", "--release", "y=full([2], 3)"]
        );
    }
}
