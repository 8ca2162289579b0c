//! The part of a long line around an error column, for messages: a real
//! model's text can hold a 170 KB line (a tensor's values), and an error
//! must show where it is, not the whole line.

/// Characters kept on each side of the column.
pub const CONTEXT: usize = 60;

/// Two lines, each indented by two spaces: the text around `col` (a
/// 0-based character index into `line`), with `…` where it was cut, and a
/// caret under the column.
pub fn caret_excerpt(line: &str, col: usize) -> String {
    let line = line.trim_end_matches(['\r', '\n']);
    let chars: Vec<char> = line.chars().collect();
    let col = col.min(chars.len());
    let start = col.saturating_sub(CONTEXT);
    let end = (col + CONTEXT).min(chars.len());
    let mut text = String::new();
    let mut caret = col - start;
    if start > 0 {
        text.push('…');
        caret += 1;
    }
    text.extend(&chars[start..end]);
    if end < chars.len() {
        text.push('…');
    }
    format!("  {text}\n  {}^", " ".repeat(caret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_kept_whole() {
        assert_eq!(caret_excerpt("a + b", 2), "  a + b\n    ^");
        assert_eq!(caret_excerpt("ab", 9), "  ab\n    ^");
    }

    #[test]
    fn long_lines_show_a_window_around_the_column() {
        let line = format!("{}X{}", "a".repeat(100_000), "b".repeat(100_000));
        let e = caret_excerpt(&line, 100_000);
        let (text, caret) = e.split_once('\n').unwrap();
        assert_eq!(text.chars().count(), 2 + 1 + CONTEXT + CONTEXT + 1);
        assert!(text.starts_with("  …a") && text.ends_with("b…"));
        // the caret sits under the X
        let at = caret.chars().count() - 1;
        assert_eq!(text.chars().nth(at), Some('X'));
    }

    #[test]
    fn wide_characters_count_as_one_column() {
        let e = caret_excerpt("é é x", 4);
        assert_eq!(e, "  é é x\n      ^");
    }
}
