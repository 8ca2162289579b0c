//! The `onnx-light` binary: a thin shell over the library (SPEC §1).

use onnx_light::repl::{self, ScriptEnd, Session};
use onnx_light::runtime::conformance;
use onnx_light::runtime::tolerance::Tolerance;
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

use onnx_light::repl::render::{print_error as err_line, print_line as out};

fn run_test(args: &[String]) -> ExitCode {
    let mut json = false;
    let mut tol = Tolerance::default();
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json = true,
            // accepted here too: `test` never colours its output
            "--no-color" => {}
            "--rtol" | "--atol" => {
                let v = it.next().map(|v| (v, v.parse::<f64>()));
                let v = match v {
                    Some((_, Ok(v))) if v.is_finite() && v >= 0.0 => v,
                    Some((v, _)) => {
                        eprintln!("error: {a} needs a non-negative number, got '{v}'\n{USAGE}");
                        return ExitCode::from(2);
                    }
                    None => {
                        eprintln!("error: {a} needs a number\n{USAGE}");
                        return ExitCode::from(2);
                    }
                };
                if a == "--rtol" {
                    tol.rtol = v;
                } else {
                    tol.atol = v;
                }
            }
            bad if bad.starts_with('-') => {
                eprintln!("error: unknown option '{bad}' for 'test'\n{USAGE}");
                return ExitCode::from(2);
            }
            path => paths.push(PathBuf::from(path)),
        }
    }
    if paths.is_empty() {
        eprintln!("error: 'test' needs at least one folder\n{USAGE}");
        return ExitCode::from(2);
    }
    let cases = match conformance::collect_cases(&paths) {
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `test` and `help` may follow the global flags: `onnx-light --no-color test DIR`
    let first = args.iter().position(|a| !a.starts_with('-'));
    if let Some(t) = first.filter(|&t| args[..t].iter().all(|a| a == "--no-color")) {
        match args[t].as_str() {
            "test" => return run_test(&args[t + 1..]),
            "help" => return run_help(&args[t + 1..]),
            _ => {}
        }
    }
    catch_ctrl_c();
    let wants_color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut cli = Cli {
        sources: vec![],
        keep_going: false,
        color: wants_color && std::io::stdout().is_terminal(),
        err_color: wants_color && std::io::stderr().is_terminal(),
    };
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let a = args[i].as_str();
        if options_done {
            cli.sources.push(if a == "-" {
                Source::Stdin
            } else {
                Source::Script(PathBuf::from(a))
            });
            i += 1;
            continue;
        }
        match a {
            "--" => options_done = true,
            "-" => cli.sources.push(Source::Stdin),
            "--no-color" => {
                cli.color = false;
                cli.err_color = false;
            }
            "--keep-going" => cli.keep_going = true,
            "-h" | "--help" => {
                out(USAGE);
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                out(&format!("onnx-light {}", env!("CARGO_PKG_VERSION")));
                return ExitCode::SUCCESS;
            }
            "-c" => {
                i += 1;
                match args.get(i) {
                    Some(c) => cli.sources.push(Source::Inline(c.clone())),
                    None => {
                        eprintln!("error: -c needs a command string\n{USAGE}");
                        return ExitCode::from(2);
                    }
                }
            }
            a if a.starts_with('-') => {
                eprintln!("error: unknown option '{a}'\n{USAGE}");
                return ExitCode::from(2);
            }
            a => cli.sources.push(Source::Script(PathBuf::from(a))),
        }
        i += 1;
    }
    if cli
        .sources
        .iter()
        .filter(|s| matches!(s, Source::Stdin))
        .count()
        > 1
    {
        eprintln!("error: '-' (standard input) given more than once\n{USAGE}");
        return ExitCode::from(2);
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
                    eprintln!("error: {}", e.0);
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
fn run_help(args: &[String]) -> ExitCode {
    let mut s = Session::new();
    let topic = args
        .iter()
        .filter(|a| *a != "--no-color")
        .cloned()
        .collect::<Vec<_>>();
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
            eprintln!("error: {}", e.0);
            ExitCode::from(2)
        }
    }
}
