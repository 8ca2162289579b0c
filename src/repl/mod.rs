//! The shell: session state ([`Session`]), the command table
//! ([`commands::COMMANDS`]: name, help, signature, handler — the signature
//! drives parsing, checks, usage, `help` and completion), the
//! tensor-expression language, output rendering, script execution and line
//! editing.

pub mod commands;
mod compare;
pub mod debugger;
mod dump;
pub mod editor;
pub mod interactive;
pub mod lex;
pub mod memory_chart;
pub mod render;
pub mod slice;
pub mod tensor_expr;

use crate::expr::Bindings;
use crate::proto::ModelProto;
use crate::runtime::{Plan, RunResult};
use crate::shape::InferReport;
use crate::tensor::Value;
use anyhow::{anyhow, Context};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a command returns. A failure is an [`anyhow::Error`] whose message
/// says what and where; a lower layer's error it wraps stays in its chain,
/// as the `source` of the context it was given. It is shown with the whole
/// chain (`{:#}`: `context: cause`), see [`Session::error_text`].
pub type CmdResult<T> = anyhow::Result<T>;

/// The opset a model without any opset import is given.
pub const DEFAULT_OPSET: i64 = 21;
/// The IR version such a model is given.
pub const DEFAULT_IR_VERSION: i64 = 10;

/// `config` options.
#[derive(Clone, Debug)]
pub struct Config {
    pub events: bool,
    pub release: bool,
    pub max_values: usize,
    pub precision: usize,
    pub seed: u64,
    /// Worker threads; `None` = all cores.
    pub threads: Option<usize>,
    /// Tensors with more elements print summarised (`print --full` does not).
    pub print_threshold: usize,
    /// Width tensors wrap at; `None` = the terminal's (75 when not a terminal).
    pub line_width: Option<usize>,
}

/// The keys of `config`, in the order it lists them.
pub const CONFIG_KEYS: &[&str] = &[
    "events",
    "release",
    "max-values",
    "precision",
    "print-threshold",
    "line-width",
    "seed",
    "threads",
    "max-memory",
    "max-iterations",
    "max-events",
];

/// The values a `config` key takes from a fixed set (completion offers
/// them); empty for numeric keys.
pub fn config_value_choices(key: &str) -> &'static [&'static str] {
    match key {
        "events" | "release" => &["on", "off"],
        "line-width" => &["auto"],
        "max-memory" => &["default"],
        _ => &[],
    }
}

/// The width tensors wrap at: the configured one, else the terminal's
/// columns when standard output is a terminal, else 75 (numpy's).
pub fn line_width(c: &Config) -> usize {
    if let Some(w) = c.line_width {
        return w;
    }
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        // SAFETY: TIOCGWINSZ fills a winsize struct we own; a failure
        // leaves it zeroed and is checked.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col >= 20 {
            return ws.ws_col as usize;
        }
    }
    75
}

impl Default for Config {
    fn default() -> Self {
        Config {
            events: true,
            release: false,
            max_values: 8,
            precision: 4,
            seed: 0,
            threads: None,
            print_threshold: 1000,
            line_width: None,
        }
    }
}

/// What a command asks the shell loop to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// The state of one shell session.
pub struct Session {
    pub model: Option<ModelProto>,
    /// Where the model came from (a path, or `<parse>`).
    pub model_source: String,
    pub(crate) plan: Option<Arc<Plan>>,
    pub report: Option<InferReport>,
    pub bindings: Bindings,
    /// Symbols bound by `run` from input shapes (a later run may rebind them).
    pub(crate) auto_bound: BTreeSet<String>,
    pub inputs: BTreeMap<String, Value>,
    pub last_run: Option<RunResult>,
    pub config: Config,
    pub(crate) rng: tensor_expr::Rng,
    pub(crate) pool: Option<Arc<rayon::ThreadPool>>,
    /// Folder relative paths resolve against (the current script's folder
    /// for `source`d files is not used: paths are relative to the cwd).
    pub base: PathBuf,
    /// Nesting of `source` (guards against a script sourcing itself).
    pub(crate) source_depth: usize,
    /// Output of the running command (printed by the caller).
    pub(crate) out: String,
    /// Status lines (`loaded …`, `N = 2`) not yet shown: they go to
    /// standard error, so standard output holds only the data asked for.
    pub(crate) status: String,
    /// The last error came from a `source`d script and already names its
    /// file and line (see [`Session::error_text`]).
    pub(crate) error_located: bool,
    /// The command wrote its own `--out` file (binary exports).
    pub(crate) out_written: bool,
    /// Breakpoints and watches (shared with a running run's hook).
    pub(crate) breaks: Arc<std::sync::Mutex<crate::runtime::debug::Breaks>>,
    /// The run stopped at a breakpoint, a step or a Ctrl-C.
    pub(crate) paused: Option<debugger::Paused>,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    pub fn new() -> Session {
        Session {
            model: None,
            model_source: String::new(),
            plan: None,
            report: None,
            bindings: Bindings::new(),
            auto_bound: BTreeSet::new(),
            inputs: BTreeMap::new(),
            last_run: None,
            config: Config::default(),
            rng: tensor_expr::Rng::new(0),
            pool: None,
            base: PathBuf::from("."),
            source_depth: 0,
            out: String::new(),
            status: String::new(),
            error_located: false,
            out_written: false,
            breaks: Arc::default(),
            paused: None,
        }
    }

    /// Replaces the model and forgets everything derived from the old one.
    /// A model that imports no opset at all (text without a header) gets
    /// the default domain at [`DEFAULT_OPSET`]; the returned note says so.
    pub fn set_model(&mut self, mut m: ModelProto, source: &str) -> Option<String> {
        let mut note = None;
        if m.opset_import.is_empty() {
            m.opset_import.push(crate::proto::OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(DEFAULT_OPSET),
            });
            if m.ir_version.is_none() {
                m.ir_version = Some(DEFAULT_IR_VERSION);
            }
            note = Some(format!(
                "note: the model imports no opset; using opset_import: [\"\" : {DEFAULT_OPSET}]"
            ));
        }
        self.model = Some(m);
        self.model_source = source.to_string();
        self.plan = None;
        self.report = None;
        self.inputs.clear();
        self.last_run = None;
        note
    }

    /// Runs one command line (which may span lines) and returns its output.
    /// When it fails, the output it printed before the error stays for
    /// [`Session::take_output`].
    pub fn execute(&mut self, line: &str) -> CmdResult<(String, Flow)> {
        self.out.clear();
        self.error_located = false;
        // the last line of defence: a bug that panics ends this command
        // with an error, not the session
        let flow = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            commands::dispatch(self, line)
        }))
        .unwrap_or_else(|p| Err(anyhow!(internal_error(p.as_ref()))))?;
        Ok((std::mem::take(&mut self.out), flow))
    }

    /// The output a failed command printed before its error.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    /// The text of an error of the last command: `error: MESSAGE`, or with
    /// `at = Some((FILE, LINE))` `FILE:LINE: error: MESSAGE`. An error
    /// inside a `source`d script keeps its own `FILE:LINE:` and gains a
    /// `sourced from` line instead (repeats folded: `(×16)`).
    pub fn error_text(&mut self, at: Option<(&str, usize)>, e: &anyhow::Error) -> String {
        let located = std::mem::take(&mut self.error_located);
        let e = clip_long_lines(&format!("{e:#}"), MAX_ERROR_LINE);
        match (at, located) {
            (Some((file, line)), true) => add_sourced_from(&e, &format!("{file}:{line}")),
            (Some((file, line)), false) => format!("{file}:{line}: error: {e}"),
            (None, true) => e,
            (None, false) => format!("error: {e}"),
        }
    }

    /// Appends a line to the command's output.
    pub(crate) fn say(&mut self, s: impl AsRef<str>) {
        push_line(&mut self.out, s.as_ref());
    }

    /// Adds a status line (shown on standard error by the caller).
    pub(crate) fn status(&mut self, s: impl AsRef<str>) {
        push_line(&mut self.status, s.as_ref());
    }

    /// The status lines of the commands run since the last call.
    pub fn take_status(&mut self) -> String {
        std::mem::take(&mut self.status)
    }

    pub(crate) fn model(&self) -> CmdResult<&ModelProto> {
        self.model
            .as_ref()
            .ok_or_else(|| anyhow!("no model: use 'load PATH' or 'parse TEXT' first"))
    }
}

/// Appends `s` to `buf` as a new line.
fn push_line(buf: &mut String, s: &str) {
    if !buf.is_empty() && !buf.ends_with('\n') {
        buf.push('\n');
    }
    buf.push_str(s);
}

/// Error lines longer than this many characters are cut (a tensor literal
/// of millions of numbers quoted back in an error stays readable).
pub const MAX_ERROR_LINE: usize = 2000;

/// Cuts each line of `text` past `max` characters, saying how much was cut.
fn clip_long_lines(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            let n = l.chars().count();
            if n <= max {
                l.to_string()
            } else {
                let head: String = l.chars().take(max).collect();
                format!("{head}… ({} more characters)", n - max)
            }
        })
        .collect();
    lines.join("\n")
}

/// Appends `  sourced from PLACE` to a located error, folding a repeat of
/// the last line into a count.
fn add_sourced_from(msg: &str, place: &str) -> String {
    let line = format!("  sourced from {place}");
    let (head, last) = msg.rsplit_once('\n').unwrap_or(("", msg));
    if let Some(rest) = last.strip_prefix(line.as_str()) {
        let n = rest
            .strip_prefix(" (×")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|r| r.parse::<usize>().ok())
            .unwrap_or(1);
        if rest.is_empty() || n > 1 {
            return format!("{head}\n{line} (×{})", n + 1);
        }
    }
    format!("{msg}\n{line}")
}

/// One command of a script: its text and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCommand {
    pub line: usize,
    pub text: String,
}

/// Splits a script into commands: one per line, `#` comments removed, and
/// a command with unbalanced brackets continues on the next lines.
pub fn split_script(text: &str) -> Vec<ScriptCommand> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut brackets = lex::Brackets::default();
    let mut start = 0;
    for (i, raw) in lines.iter().enumerate() {
        if cur.is_empty() {
            let l = lex::strip_comment(raw).trim();
            if l.is_empty() {
                continue;
            }
            start = i + 1;
            brackets = lex::Brackets::default();
        } else {
            cur.push('\n');
            brackets.feed("\n");
        }
        cur.push_str(raw);
        brackets.feed(raw);
        if !lex::needs_more(&cur, brackets.depth())
            && !continues_with_function(&cur, &lines[i + 1..])
        {
            out.push(ScriptCommand {
                line: start,
                text: std::mem::take(&mut cur),
            });
        }
    }
    if !cur.trim().is_empty() {
        out.push(ScriptCommand {
            line: start,
            text: cur,
        });
    }
    out
}

/// A `parse` command goes on when the next non-blank line starts a
/// function (`<domain: ...>` header) of the same model text.
fn continues_with_function(cur: &str, rest: &[&str]) -> bool {
    let is_parse = cur.trim_start().starts_with("parse");
    is_parse
        && rest
            .iter()
            .map(|l| lex::strip_comment(l).trim())
            .find(|l| !l.is_empty())
            .is_some_and(|l| l.starts_with('<'))
}

/// Splits `-c` text at top-level `;` and newlines (brackets kept whole).
pub fn split_inline(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for cmd in split_script(text) {
        for part in lex::split_top(&cmd.text, |c| c == ';') {
            if !part.trim().is_empty() {
                out.push(part.trim().to_string());
            }
        }
    }
    out
}

/// How a script run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptEnd {
    Done,
    Quit,
    /// The first failing command (without `--keep-going`): `FILE:LINE: error: MESSAGE`.
    Failed(String),
}

/// Where a script's output goes: data, status lines, errors.
pub struct ScriptOutput<'a> {
    pub print: &'a mut dyn FnMut(&str),
    pub status: &'a mut dyn FnMut(&str),
    pub eprint: &'a mut dyn FnMut(&str),
}

/// Runs a script's text in a session, printing data through `out.print`,
/// status lines through `out.status` and errors through `out.eprint`.
/// Returns how it ended and the number of failures.
pub fn run_script(
    s: &mut Session,
    name: &str,
    text: &str,
    keep_going: bool,
    out: ScriptOutput<'_>,
) -> (ScriptEnd, usize) {
    let ScriptOutput {
        print,
        status,
        eprint,
    } = out;
    let mut failures = 0;
    for cmd in split_script(text) {
        let result = s.execute(&cmd.text);
        let st = s.take_status();
        if !st.is_empty() {
            status(&st);
        }
        // Ctrl-C ends the script at this line, even with keep_going (and
        // the scripts that sourced it: the flag stays set until the shell
        // reads its next line)
        let stop = crate::runtime::limits::interrupted();
        match result {
            Ok((out, flow)) => {
                if !out.is_empty() {
                    print(&out);
                }
                if flow == Flow::Quit {
                    return (ScriptEnd::Quit, failures);
                }
                if stop {
                    let msg = format!("{name}:{}: interrupted (Ctrl-C)", cmd.line);
                    return (ScriptEnd::Failed(msg), failures + 1);
                }
            }
            Err(e) => {
                failures += 1;
                let partial = s.take_output();
                if !partial.is_empty() {
                    print(&partial);
                }
                let msg = s.error_text(Some((name, cmd.line)), &e);
                if keep_going && !stop {
                    eprint(&msg);
                } else {
                    return (ScriptEnd::Failed(msg), failures);
                }
            }
        }
    }
    (ScriptEnd::Done, failures)
}

/// Reads a script file, refusing what is not a readable text file.
pub fn read_script(path: &Path) -> CmdResult<String> {
    crate::files::read_text(path).with_context(|| path.display().to_string())
}

/// The message for a panic caught at a command boundary.
fn internal_error(payload: &(dyn std::any::Any + Send)) -> String {
    let what = crate::runtime::limits::panic_message(payload);
    format!("internal error: {what} (a bug in onnx-light: please report it; the session goes on)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lower layer's error stays in the chain, as the source of the
    /// command's context, and is shown with it: `context: cause`.
    #[test]
    fn an_error_keeps_its_cause_and_shows_the_whole_chain() {
        let mut s = Session::new();
        let p = "/nonexistent-onnx-light/m.txt";
        let e = s.execute(&format!("load {p}")).unwrap_err();
        assert_eq!(e.chain().count(), 2, "{e:?}");
        let io = e
            .root_cause()
            .downcast_ref::<std::io::Error>()
            .expect("the I/O error is the source");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(e.to_string(), p);
        assert_eq!(format!("{e:#}"), format!("{p}: {io}"));
        assert_eq!(s.error_text(None, &e), format!("error: {p}: {io}"));
        assert_eq!(
            s.error_text(Some(("x.txt", 3)), &e),
            format!("x.txt:3: error: {p}: {io}")
        );
    }

    /// A message without a cause is one link.
    #[test]
    fn a_plain_message_is_one_link() {
        let mut s = Session::new();
        let e = s.execute("show").unwrap_err();
        assert_eq!(e.chain().count(), 1);
        assert_eq!(
            s.error_text(None, &e),
            "error: no model: use 'load PATH' or 'parse TEXT' first"
        );
    }
}
