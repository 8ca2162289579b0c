//! Line editing for the interactive shell: a rustyline helper that
//! completes command names, flags and file paths, and keeps reading lines
//! while brackets are unbalanced (multi-line `parse`).

use super::commands::{find, COMMANDS};
use super::lex;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};

/// The shell's rustyline helper.
pub struct ShellHelper {
    files: FilenameCompleter,
}

impl Default for ShellHelper {
    fn default() -> Self {
        ShellHelper {
            files: FilenameCompleter::new(),
        }
    }
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let word_start = before
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        let word = &before[word_start..];
        if word_start == 0 {
            let c = COMMANDS
                .iter()
                .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
                .filter(|n| n.starts_with(word))
                .map(|n| Pair {
                    display: n.to_string(),
                    replacement: format!("{n} "),
                })
                .collect();
            return Ok((0, c));
        }
        let cmd = before.split_whitespace().next().unwrap_or("");
        let Some(c) = find(cmd) else {
            return Ok((pos, vec![]));
        };
        if let Some(prefix) = word.strip_prefix("--") {
            let v = c
                .flags
                .iter()
                .filter(|f| f.name.starts_with(prefix))
                .map(|f| Pair {
                    display: format!("--{}", f.name),
                    replacement: format!("--{} ", f.name),
                })
                .collect();
            return Ok((word_start, v));
        }
        if matches!(c.name, "load" | "save" | "source") {
            return self.files.complete(line, pos, ctx);
        }
        if c.name == "config" {
            let keys = [
                "events",
                "release",
                "max-values",
                "precision",
                "seed",
                "threads",
            ];
            let v = keys
                .iter()
                .filter(|k| k.starts_with(word))
                .map(|k| Pair {
                    display: k.to_string(),
                    replacement: format!("{k} "),
                })
                .collect();
            return Ok((word_start, v));
        }
        Ok((pos, vec![]))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        if lex::is_incomplete(ctx.input()) {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Helper for ShellHelper {}
