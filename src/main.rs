//! The `onnx-light` binary: a thin shell over the library (SPEC §1).

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use onnx_light::repl::{self, ScriptEnd, Session};
use onnx_light::runtime::conformance;
use onnx_light::runtime::tolerance::Tolerance;
use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage:
  onnx-light                          interactive shell
  onnx-light FILE.repl [FILE.repl...] run scripts in one session (`-` reads
                                      standard input; `--` ends the options)
  onnx-light -c \"CMD; CMD\"            run commands given inline (with scripts:
                                      in the order given)
  onnx-light help [COMMAND]           this help and the shell's commands
  onnx-light test PATH... [--json] [--rtol R] [--atol A]
                                      run ONNX backend test folders (floats
                                      pass when |got-want| <= A + R*|want|;
                                      defaults R=1e-3, A=1e-7)
options:
  --no-color     plain output (also NO_COLOR=1, or when stdout is not a terminal)
  --keep-going   report a failing script line and continue (then the next
                 script; the exit code is 1 if anything failed)
  -h, --help     this help
  -V, --version  the version";

/// The command line. Parsing is clap's; the usage text is [`USAGE`] (clap's
/// own help and version flags are replaced by ours, so `-h` prints USAGE).
/// `--no-color` is global: it may come before or after `test` and `help`.
#[derive(Parser, Debug)]
#[command(
    name = "onnx-light",
    disable_help_flag = true,
    disable_version_flag = true,
    disable_help_subcommand = true,
    args_override_self = true
)]
struct Args {
    /// plain output (also NO_COLOR=1, or when stdout is not a terminal)
    #[arg(long = "no-color", global = true)]
    no_color: bool,
    /// report a failing script line and continue
    #[arg(long = "keep-going")]
    keep_going: bool,
    /// this help
    #[arg(short = 'h', long = "help", global = true)]
    help: bool,
    /// the version
    #[arg(short = 'V', long = "version")]
    version: bool,
    /// commands given inline (`;` or newline separated); repeatable
    #[arg(short = 'c', value_name = "CMD", allow_hyphen_values = true)]
    inline: Vec<String>,
    /// scripts to run in one session (`-` reads standard input)
    #[arg(value_name = "FILE.repl")]
    scripts: Vec<String>,
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// run ONNX backend test folders
    Test {
        /// the per-case results as JSON
        #[arg(long)]
        json: bool,
        /// relative tolerance (floats)
        #[arg(long, value_name = "R", allow_hyphen_values = true)]
        rtol: Option<String>,
        /// absolute tolerance (floats)
        #[arg(long, value_name = "A", allow_hyphen_values = true)]
        atol: Option<String>,
        /// case folders, or folders holding them
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// this help and the shell's commands
    Help {
        #[arg(value_name = "COMMAND")]
        topic: Vec<String>,
    },
}

/// What to run, in the order given on the command line.
enum Source {
    Inline(String),
    Script(PathBuf),
    Stdin,
}

struct Cli {
    sources: Vec<Source>,
    keep_going: bool,
    /// Colour on standard output / standard error, decided per stream.
    color: bool,
    err_color: bool,
}

/// A bad invocation: the message and the usage on stderr, exit 2 (SPEC §1).
fn bad_invocation(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n{USAGE}");
    ExitCode::from(2)
}

/// A clap error in the words of the rest of the shell.
fn clap_message(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let invalid = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(a)) => a.split_whitespace().next().unwrap_or("").to_string(),
        _ => String::new(),
    };
    match e.kind() {
        ErrorKind::UnknownArgument => format!("unknown option '{invalid}'"),
        ErrorKind::InvalidValue | ErrorKind::NoEquals if invalid == "-c" => {
            "-c needs a command string".to_string()
        }
        ErrorKind::InvalidValue | ErrorKind::NoEquals if !invalid.is_empty() => {
            format!("{invalid} needs a value")
        }
        ErrorKind::InvalidUtf8 => "arguments must be valid UTF-8".to_string(),
        _ => {
            // clap's own first line, without its `error: ` prefix
            let text = e.render().to_string();
            let line = text.lines().next().unwrap_or("bad arguments");
            line.strip_prefix("error: ").unwrap_or(line).to_string()
        }
    }
}

/// The `-c` strings and scripts, in the order they were given.
fn sources_in_order(m: &ArgMatches) -> Vec<Source> {
    let mut ordered: Vec<(usize, Source)> = Vec::new();
    if let (Some(at), Some(values)) = (m.indices_of("inline"), m.get_many::<String>("inline")) {
        ordered.extend(at.zip(values).map(|(i, c)| (i, Source::Inline(c.clone()))));
    }
    if let (Some(at), Some(values)) = (m.indices_of("scripts"), m.get_many::<String>("scripts")) {
        ordered.extend(at.zip(values).map(|(i, p)| {
            let src = if p == "-" {
                Source::Stdin
            } else {
                Source::Script(PathBuf::from(p))
            };
            (i, src)
        }));
    }
    ordered.sort_by_key(|(i, _)| *i);
    ordered.into_iter().map(|(_, s)| s).collect()
}

use onnx_light::repl::render::{print_error as err_line, print_line as out};

/// A tolerance given on the command line: a finite, non-negative number.
fn tolerance_arg(flag: &str, v: Option<&String>, default: f64) -> Result<f64, String> {
    let Some(v) = v else { return Ok(default) };
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("{flag} needs a non-negative number, got '{v}'")),
    }
}

fn run_test(
    json: bool,
    rtol: Option<&String>,
    atol: Option<&String>,
    paths: &[PathBuf],
) -> ExitCode {
    let default = Tolerance::default();
    let tol = match (
        tolerance_arg("--rtol", rtol, default.rtol),
        tolerance_arg("--atol", atol, default.atol),
    ) {
        (Ok(rtol), Ok(atol)) => Tolerance { rtol, atol },
        (Err(e), _) | (_, Err(e)) => return bad_invocation(&e),
    };
    if paths.is_empty() {
        return bad_invocation("'test' needs at least one folder");
    }
    let cases = match conformance::collect_cases(paths) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut results = Vec::with_capacity(cases.len());
    // a progress bar on a terminal's stderr (hidden when piped)
    let bar = onnx_light::repl::render::progress_bar(
        cases.len() as u64,
        "{bar:30} {pos}/{len} cases {elapsed} (eta {eta}) {msg}",
    );
    for c in &cases {
        bar.set_message(
            c.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        let r = conformance::run_case(c, &tol);
        if !json {
            let line = if r.passed {
                format!("ok {}", r.name)
            } else if r.skipped {
                format!("skip {}: {}", r.name, r.reason.replace('\n', " "))
            } else {
                format!("FAIL {}: {}", r.name, r.reason.replace('\n', " "))
            };
            bar.suspend(|| out(&line));
        }
        bar.inc(1);
        results.push(r);
    }
    bar.finish_and_clear();
    let failed = results.iter().filter(|r| !r.passed && !r.skipped).count();
    let skipped = results.iter().filter(|r| r.skipped).count();
    if json {
        out(&serde_json::to_string_pretty(&results).unwrap_or_default());
    } else {
        // ", K skipped" only when something was skipped: the last line
        // stays `N passed, M failed` otherwise (SPEC §7)
        let tail = if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        };
        out(&format!(
            "{} passed, {} failed{tail}",
            results.len() - failed - skipped,
            failed
        ));
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// While a command runs, Ctrl-C (SIGINT) asks it to stop between nodes or
/// iterations instead of killing the shell: the interactive shell returns
/// to the prompt, a script stops at that line. (At the prompt the line
/// editor reads Ctrl-C itself, as a key.)
fn catch_ctrl_c() {
    extern "C" fn on_sigint(_: libc::c_int) {
        onnx_light::runtime::limits::interrupt();
    }
    // SAFETY: the handler only stores to an atomic (async-signal-safe); the
    // sigaction struct is zeroed and then filled as sigaction(2) describes.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

fn interactive(s: &mut Session, color: bool) -> ExitCode {
    repl::interactive::interactive(s, color)
}

/// Runs a script's text; `Ok(false)` when it quit the shell. A failure
/// has already been reported on stderr.
fn run_text(s: &mut Session, name: &str, text: &str, cli: &Cli) -> Result<bool, ()> {
    let mut print = |o: &str| out(o);
    let mut eprint = |e: &str| err_line(e, cli.err_color);
    let mut status = |o: &str| eprintln!("{o}");
    let output = repl::ScriptOutput {
        print: &mut print,
        status: &mut status,
        eprint: &mut eprint,
    };
    let (end, failures) = repl::run_script(s, name, text, cli.keep_going, output);
    match end {
        ScriptEnd::Failed(msg) => {
            err_line(&msg, cli.err_color);
            Err(())
        }
        ScriptEnd::Quit => Ok(false),
        ScriptEnd::Done if failures > 0 => Err(()),
        ScriptEnd::Done => Ok(true),
    }
}

/// The stack of the thread the shell runs on. Every nesting of user input
/// is bounded well below it; the large stack is a second line of defence.
const SHELL_STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    // before any buffer is allocated or a runtime thread started
    onnx_light::runtime::heap::retain_freed_buffers();
    let shell = std::thread::Builder::new()
        .name("onnx-light".into())
        .stack_size(SHELL_STACK_BYTES)
        .spawn(shell_main);
    match shell.map(|t| t.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::from(101),
        Err(e) => {
            eprintln!("error: cannot start the shell thread: {e}");
            ExitCode::FAILURE
        }
    }
}

fn shell_main() -> ExitCode {
    shell_with_args(std::env::args_os().collect())
}

fn shell_with_args(argv: Vec<OsString>) -> ExitCode {
    let matches = match Args::command().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return bad_invocation(&clap_message(&e)),
    };
    let args = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => return bad_invocation(&clap_message(&e)),
    };
    if args.help {
        out(USAGE);
        return ExitCode::SUCCESS;
    }
    if args.version {
        out(&format!("onnx-light {}", env!("CARGO_PKG_VERSION")));
        return ExitCode::SUCCESS;
    }
    if let Some(sub) = &args.command {
        let name = match sub {
            Sub::Test { .. } => "test",
            Sub::Help { .. } => "help",
        };
        // script-mode options mean nothing to `test` and `help`
        if args.keep_going || !args.inline.is_empty() {
            let what = if args.keep_going {
                "--keep-going"
            } else {
                "-c"
            };
            return bad_invocation(&format!("{what} does not go with '{name}'"));
        }
        return match sub {
            Sub::Test {
                json,
                rtol,
                atol,
                paths,
            } => run_test(*json, rtol.as_ref(), atol.as_ref(), paths),
            Sub::Help { topic } => run_help(topic),
        };
    }
    catch_ctrl_c();
    let wants_color = !args.no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut cli = Cli {
        sources: sources_in_order(&matches),
        keep_going: args.keep_going,
        color: wants_color && std::io::stdout().is_terminal(),
        err_color: wants_color && std::io::stderr().is_terminal(),
    };
    if cli
        .sources
        .iter()
        .filter(|s| matches!(s, Source::Stdin))
        .count()
        > 1
    {
        return bad_invocation("'-' (standard input) given more than once");
    }
    // the prompt and table colours follow stdout, error colours stderr
    colored::control::set_override(cli.color);
    let mut s = Session::new();
    if cli.sources.is_empty() {
        if std::io::stdin().is_terminal() {
            return interactive(&mut s, cli.color);
        }
        cli.sources.push(Source::Stdin);
    }
    let mut failed = false;
    for src in std::mem::take(&mut cli.sources) {
        let (name, text) = match src {
            Source::Inline(c) => ("-c".to_string(), repl::split_inline(&c).join("\n")),
            Source::Script(p) => match repl::read_script(&p) {
                Ok(t) => (p.display().to_string(), t),
                Err(e) => {
                    eprintln!("error: {e:#}");
                    return ExitCode::from(2);
                }
            },
            Source::Stdin => {
                let mut text = String::new();
                if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                    eprintln!("error: cannot read standard input: {e}");
                    return ExitCode::from(2);
                }
                ("<stdin>".to_string(), text)
            }
        };
        match run_text(&mut s, &name, &text, &cli) {
            Ok(true) => {}
            Ok(false) => break,
            // with --keep-going a failing script does not stop the next one
            Err(()) if cli.keep_going && !onnx_light::runtime::limits::interrupted() => {
                failed = true
            }
            Err(()) => return ExitCode::from(1),
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `onnx-light help [COMMAND]`: the usage, then the shell's command list
/// (or one command's help).
fn run_help(topic: &[String]) -> ExitCode {
    let mut s = Session::new();
    match s.execute(&format!("help {}", topic.join(" "))) {
        Ok((text, _)) => {
            if topic.is_empty() {
                out(USAGE);
                out("");
            }
            out(&text);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
