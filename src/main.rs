//! The `onnx-light` binary: a thin shell over the library (SPEC §1).

use colored::Colorize;
use onnx_light::repl::{self, ScriptEnd, Session};
use onnx_light::runtime::backend;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage:
  onnx-light                          interactive shell
  onnx-light FILE.repl [FILE.repl...] run scripts in one session
  onnx-light -c \"CMD; CMD\"            run commands given inline
  onnx-light test PATH... [--json] [--rtol R] [--atol A]
                                      run ONNX backend test folders (floats
                                      pass when |got-want| <= A + R*|want|;
                                      defaults R=1e-3, A=1e-7)
options:
  --no-color     plain output (also NO_COLOR=1, or when stdout is not a terminal)
  --keep-going   report a failing script line and continue
  -h, --help     this help
  -V, --version  the version";

struct Cli {
    scripts: Vec<PathBuf>,
    inline: Vec<String>,
    keep_going: bool,
    color: bool,
}

fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{s}");
}

fn err_line(s: &str, color: bool) {
    if color {
        eprintln!("{}", s.red());
    } else {
        eprintln!("{s}");
    }
}

fn run_test(args: &[String]) -> ExitCode {
    let mut json = false;
    let mut tol = backend::Tolerance::default();
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
    let cases = match backend::collect_cases(&paths) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut results = Vec::with_capacity(cases.len());
    for c in &cases {
        let r = backend::run_case(c, &tol);
        if !json {
            if r.passed {
                out(&format!("ok {}", r.name));
            } else {
                out(&format!("FAIL {}: {}", r.name, r.reason.replace('\n', " ")));
            }
        }
        results.push(r);
    }
    let failed = results.iter().filter(|r| !r.passed).count();
    if json {
        out(&serde_json::to_string_pretty(&results).unwrap_or_default());
    } else {
        out(&format!(
            "{} passed, {} failed",
            results.len() - failed,
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

fn run_text(s: &mut Session, name: &str, text: &str, cli: &Cli) -> Result<bool, ExitCode> {
    let mut failures = 0;
    let mut print = |o: &str| out(o);
    let mut eprint = |e: &str| err_line(e, cli.color);
    let mut status = |o: &str| eprintln!("{o}");
    let output = repl::ScriptOutput {
        print: &mut print,
        status: &mut status,
        eprint: &mut eprint,
    };
    let (end, f) = repl::run_script(s, name, text, cli.keep_going, output);
    failures += f;
    match end {
        ScriptEnd::Failed(msg) => {
            err_line(&msg, cli.color);
            Err(ExitCode::from(1))
        }
        ScriptEnd::Quit => Ok(false),
        ScriptEnd::Done => {
            if failures > 0 {
                Err(ExitCode::from(1))
            } else {
                Ok(true)
            }
        }
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
    // `test` may follow the global flags: `onnx-light --no-color test DIR`
    if let Some(t) = args
        .iter()
        .position(|a| !a.starts_with('-'))
        .filter(|&t| args[t] == "test" && args[..t].iter().all(|a| a == "--no-color"))
    {
        return run_test(&args[t + 1..]);
    }
    catch_ctrl_c();
    let mut cli = Cli {
        scripts: vec![],
        inline: vec![],
        keep_going: false,
        color: std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--no-color" => cli.color = false,
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
                    Some(c) => cli.inline.push(c.clone()),
                    None => {
                        eprintln!("error: -c needs a command string\n{USAGE}");
                        return ExitCode::from(2);
                    }
                }
            }
            a if a.starts_with('-') && a.len() > 1 => {
                eprintln!("error: unknown option '{a}'\n{USAGE}");
                return ExitCode::from(2);
            }
            a => cli.scripts.push(PathBuf::from(a)),
        }
        i += 1;
    }
    colored::control::set_override(cli.color);
    let mut s = Session::new();
    for c in &cli.inline.clone() {
        let cmds = repl::split_inline(c);
        let text = cmds.join("\n");
        match run_text(&mut s, "-c", &text, &cli) {
            Ok(true) => {}
            Ok(false) => return ExitCode::SUCCESS,
            Err(code) => return code,
        }
    }
    for p in &cli.scripts.clone() {
        let text = match repl::read_script(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {}", e.0);
                return ExitCode::from(2);
            }
        };
        match run_text(&mut s, &p.display().to_string(), &text, &cli) {
            Ok(true) => {}
            Ok(false) => return ExitCode::SUCCESS,
            Err(code) => return code,
        }
    }
    if !cli.inline.is_empty() || !cli.scripts.is_empty() {
        return ExitCode::SUCCESS;
    }
    if std::io::stdin().is_terminal() {
        return interactive(&mut s, cli.color);
    }
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error: cannot read standard input: {e}");
        return ExitCode::from(2);
    }
    match run_text(&mut s, "<stdin>", &text, &cli) {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
