//! The interactive shell: the prompt loop over a [`Session`].
//!
//! - Every line is read by rustyline and ends at Enter. A command with
//!   unbalanced brackets (or a `parse` whose model text is not finished)
//!   continues on the next lines, read with the continuation prompt
//!   [`CONTINUATION_PROMPT`]; the whole command is one history entry.
//! - Text that holds several commands (a bracketed paste arrives as one
//!   string with newlines) is split as a script is ([`super::split_script`])
//!   and its commands run one by one, each output before the next command.
//!   Lines pasted without bracketed paste arrive one Enter at a time; the
//!   line editor keeps what was typed ahead between lines (rustyline's
//!   `buffer-redux` feature), so none is lost.
//! - History is appended to its file as each command is entered, so a
//!   killed shell loses nothing; at most [`HISTORY_MAX`] entries are kept,
//!   in [`history_path`].
//! - Ctrl-C at the prompt clears the line (rustyline reads it as a key: the
//!   terminal is in raw mode with signals off while a line is read). While
//!   a command runs, the terminal is back in its normal mode and Ctrl-C is a
//!   SIGINT, which the binary's handler turns into
//!   [`crate::runtime::limits::interrupt`]: runs stop between nodes, `bench`
//!   between runs, and the shell returns to the prompt with the model,
//!   inputs, bindings and history intact.

use super::editor::{CompletionNames, ShellHelper};
use super::{split_script, CmdResult, Flow, Session};
use crate::runtime::limits;
use colored::Colorize;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{CompletionType, Config, Editor};
use std::cell::RefCell;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

/// The prompt.
pub const PROMPT: &str = "onnx> ";
/// The prompt of a command's continuation lines (brackets still open).
pub const CONTINUATION_PROMPT: &str = "....> ";
/// History entries kept (in memory and in the file).
pub const HISTORY_MAX: usize = 10_000;
/// Environment variable naming the history file (empty: no history file).
pub const HISTORY_ENV: &str = "ONNX_LIGHT_HISTORY";

/// The history file: `$ONNX_LIGHT_HISTORY`, else
/// `$XDG_STATE_HOME/onnx-light/history`, else
/// `~/.local/state/onnx-light/history`. `None` when `ONNX_LIGHT_HISTORY` is
/// set empty or no home folder is known.
pub fn history_path() -> Option<PathBuf> {
    history_path_from(|k| std::env::var_os(k))
}

fn history_path_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(p) = env(HISTORY_ENV) {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    // the XDG spec: a relative XDG_STATE_HOME is invalid and ignored
    let state = env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local").join("state"))
        })?;
    Some(state.join("onnx-light").join("history"))
}

/// Takes the commands that are complete out of `pending` (the text entered
/// since the last command ran) and leaves an unfinished last command in it.
pub fn take_commands(pending: &mut String) -> Vec<String> {
    let mut cmds: Vec<String> = split_script(pending).into_iter().map(|c| c.text).collect();
    pending.clear();
    if cmds.last().is_some_and(|c| super::lex::is_incomplete(c)) {
        *pending = cmds.pop().unwrap_or_default();
    }
    cmds
}

/// Runs one command; its status lines go to stderr here, its output and
/// error to the caller.
pub fn run_line(s: &mut Session, line: &str) -> CmdResult<(String, Flow)> {
    let result = s.execute(line);
    let st = s.take_status();
    if !st.is_empty() {
        eprintln!("{st}");
    }
    result
}

use super::render::{print_error as err_line, print_line as out};

/// What the shell does after a command.
enum After {
    Next,
    /// Ctrl-C stopped it: the rest of a paste is dropped.
    Interrupted,
    Quit,
}

/// Whether the terminal echoed a Ctrl-C as `^C` (ECHO and ECHOCTL set on
/// standard input): the shell's message then starts on a line of its own.
fn terminal_echoes_ctrl_c() -> bool {
    // SAFETY: tcgetattr only writes the termios struct it is given, which
    // is zeroed (a valid bit pattern for this plain C struct).
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0
            && t.c_lflag & libc::ECHO != 0
            && t.c_lflag & libc::ECHOCTL != 0
    }
}

/// Runs one entered command and prints what it gives.
fn run_entered(s: &mut Session, cmd: &str, color: bool) -> After {
    let result = run_line(s, cmd);
    let stopped = limits::interrupted();
    if stopped && terminal_echoes_ctrl_c() {
        eprintln!();
    }
    match result {
        Ok((text, flow)) => {
            if !text.is_empty() {
                out(&text);
            }
            if flow == Flow::Quit {
                return After::Quit;
            }
        }
        Err(e) => {
            // what the command printed before it failed (a sourced script's
            // lines, a check table with a MISMATCH)
            let partial = s.take_output();
            if !partial.is_empty() {
                out(&partial);
            }
            let text = format!("{e:#}");
            if stopped && text.contains("interrupted (Ctrl-C)") {
                err_line(&text, color);
                return After::Interrupted;
            }
            err_line(&s.error_text(None, &e), color);
            if stopped {
                err_line("interrupted (Ctrl-C)", color);
            }
        }
    }
    if stopped {
        After::Interrupted
    } else {
        After::Next
    }
}

/// The shell's line editor: candidates listed (not cycled), bounded
/// history, every Enter ends a line.
fn editor(
    names: Rc<RefCell<CompletionNames>>,
) -> rustyline::Result<Editor<ShellHelper, DefaultHistory>> {
    let config = Config::builder()
        .auto_add_history(false)
        .max_history_size(HISTORY_MAX)?
        .history_ignore_dups(true)?
        .history_ignore_space(false)
        .completion_type(CompletionType::List)
        .bracketed_paste(true)
        .build();
    let mut ed = Editor::with_config(config)?;
    ed.set_helper(Some(ShellHelper::new(names)));
    Ok(ed)
}

/// The history file, ready to append to: its folder is created and its
/// entries loaded. A warning says why there is none.
fn open_history(ed: &mut Editor<ShellHelper, DefaultHistory>) -> Option<PathBuf> {
    let path = history_path()?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!(
                "warning: history is not saved: cannot create {}: {e}",
                dir.display()
            );
            return None;
        }
    }
    // the history of versions that kept it in ~/.onnx_light_history
    let old = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".onnx_light_history"));
    let from = match old {
        Some(old) if !path.exists() && std::env::var_os(HISTORY_ENV).is_none() && old.is_file() => {
            old
        }
        _ => path.clone(),
    };
    if from.exists() {
        if let Err(e) = ed.load_history(&from) {
            if from == path {
                // appending to a file that cannot be read could spoil it
                eprintln!(
                    "warning: history is not saved: cannot read {}: {e}",
                    path.display()
                );
                return None;
            }
            eprintln!(
                "warning: cannot read the old history {}: {e}",
                from.display()
            );
        }
    }
    Some(path)
}

/// The interactive shell over `s` until `quit` or end of input.
pub fn interactive(s: &mut Session, color: bool) -> ExitCode {
    let names = Rc::new(RefCell::new(s.completion_names()));
    let mut ed = match editor(names.clone()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return ExitCode::from(1);
        }
    };
    let mut history = open_history(&mut ed);
    out("onnx-light — an interactive shell for ONNX models. 'help' lists the commands.");
    let paint = |p: &str| {
        if color {
            p.cyan().bold().to_string()
        } else {
            p.to_string()
        }
    };
    let (prompt, continuation) = (paint(PROMPT), paint(CONTINUATION_PROMPT));
    let mut pending = String::new();
    loop {
        // a Ctrl-C from now on is for the next command: while the line is
        // read the terminal sends none (rustyline reads Ctrl-C as a key)
        limits::clear_interrupt();
        let p = if pending.is_empty() {
            &prompt
        } else {
            &continuation
        };
        let cmds = match ed.readline(p) {
            Ok(line) => {
                if !pending.is_empty() {
                    pending.push('\n');
                }
                pending.push_str(&line);
                take_commands(&mut pending)
            }
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            // end of input inside a command: run it as a script would
            Err(ReadlineError::Eof) if !pending.is_empty() => vec![std::mem::take(&mut pending)],
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        };
        for cmd in cmds {
            let _ = ed.add_history_entry(cmd.as_str());
            if let Some(path) = &history {
                if let Err(e) = ed.append_history(path) {
                    eprintln!(
                        "warning: history is not saved: cannot write {}: {e}",
                        path.display()
                    );
                    history = None;
                }
            }
            let after = run_entered(s, &cmd, color);
            *names.borrow_mut() = s.completion_names();
            match after {
                After::Next => {}
                After::Interrupted => break,
                After::Quit => return ExitCode::SUCCESS,
            }
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn history_lives_in_the_xdg_state_folder() {
        let p = history_path_from(env(&[("HOME", "/home/u")]));
        assert_eq!(
            p,
            Some(PathBuf::from("/home/u/.local/state/onnx-light/history"))
        );
        let p = history_path_from(env(&[("HOME", "/home/u"), ("XDG_STATE_HOME", "/st")]));
        assert_eq!(p, Some(PathBuf::from("/st/onnx-light/history")));
        // a relative XDG_STATE_HOME is ignored (XDG base directory spec)
        let p = history_path_from(env(&[("HOME", "/home/u"), ("XDG_STATE_HOME", "st")]));
        assert_eq!(
            p,
            Some(PathBuf::from("/home/u/.local/state/onnx-light/history"))
        );
        let p = history_path_from(env(&[
            ("HOME", "/home/u"),
            ("XDG_STATE_HOME", "/st"),
            (HISTORY_ENV, "/tmp/h"),
        ]));
        assert_eq!(p, Some(PathBuf::from("/tmp/h")));
        assert_eq!(history_path_from(env(&[(HISTORY_ENV, "")])), None);
        assert_eq!(history_path_from(env(&[])), None);
    }

    #[test]
    fn pasted_lines_are_separate_commands() {
        let mut p = String::from("eval 10\neval 20\n\n# a comment\neval 30\n");
        assert_eq!(take_commands(&mut p), ["eval 10", "eval 20", "eval 30"]);
        assert!(p.is_empty());
    }

    #[test]
    fn an_unbalanced_command_waits_for_its_end() {
        let mut p = String::from("eval 1\neval (2");
        assert_eq!(take_commands(&mut p), ["eval 1"]);
        assert_eq!(p, "eval (2");
        p.push_str("\n+ 3)");
        assert_eq!(take_commands(&mut p), ["eval (2\n+ 3)"]);
        assert!(p.is_empty());
        let mut p = String::from("parse");
        assert!(take_commands(&mut p).is_empty());
        assert_eq!(p, "parse");
    }

    #[test]
    fn a_parse_spanning_lines_is_one_command() {
        let mut p = String::from(
            "parse <ir_version: 10, opset_import: [\"\" : 18]>\ng (float[2] x) => (float[2] y)\n{\n  y = Neg(x)\n}\nshow",
        );
        let cmds = take_commands(&mut p);
        assert_eq!(cmds.len(), 2, "{cmds:?}");
        assert!(cmds[0].ends_with('}'));
        assert_eq!(cmds[1], "show");
    }
}
