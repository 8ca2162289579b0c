//! The interactive shell in a pseudo-terminal, as a user meets it: Ctrl-C
//! during a long `bench`, pasting several lines (with and without
//! bracketed paste), Tab listing candidates, the continuation prompt, and
//! history that survives a killed shell.
//!
//! Each test drives the real binary through `rexpect`, with generous
//! timeouts (the machine may be loaded) and waits for what the shell
//! prints rather than sleeping.

#![cfg(unix)]

use rexpect::process::signal::Signal;
use rexpect::reader::Options;
use rexpect::session::PtySession;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// What every wait may take.
const TIMEOUT_MS: u64 = 30_000;

/// A folder of its own for one test (history file, files to complete).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onnx_light_pty_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The shell in a pseudo-terminal, in `dir`, keeping its history in
/// `dir/history`, without colour; waits for the first prompt.
fn shell(dir: &Path) -> PtySession {
    let mut cmd = command(dir);
    cmd.env("ONNX_LIGHT_HISTORY", dir.join("history"));
    spawn(cmd)
}

/// The binary run in `dir`, without colour, history where `HOME` says.
fn command(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnx-light"));
    cmd.current_dir(dir)
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .env_remove("ONNX_LIGHT_HISTORY")
        .env_remove("XDG_STATE_HOME");
    cmd
}

/// Starts `cmd` in a pseudo-terminal and waits for the first prompt.
fn spawn(cmd: Command) -> PtySession {
    let opts = Options::new()
        .timeout_ms(Some(TIMEOUT_MS))
        .strip_ansi_escape_codes(true);
    let mut p = rexpect::spawn_with_options(cmd, opts).expect("start onnx-light in a pty");
    p.exp_string("onnx> ").expect("the first prompt");
    p
}

/// Types `text` and presses Enter.
fn enter(p: &mut PtySession, text: &str) {
    p.send(text).unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
}

/// Waits for a whole output line equal to `line`.
fn expect_line(p: &mut PtySession, line: &str) {
    // output lines end in CR LF (the terminal's normal mode); the LF is
    // left for the next line's match
    let re = format!("\n{}\r", regex_escape(line));
    if let Err(e) = p.exp_regex(&re) {
        panic!("no output line '{line}': {e}");
    }
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == ' ' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

/// Presses Ctrl-C once the line editor shows `shown`, and waits for the
/// fresh prompt. (Input typed before that prompt is dropped with the line.)
fn clear_line(p: &mut PtySession, shown: &str) {
    p.exp_string(shown).unwrap();
    p.send_control('c').unwrap();
    p.exp_string("onnx> ").expect("a fresh prompt after Ctrl-C");
}

/// A model whose one MatMul of 512x512 floats makes `bench` long.
const MATMUL: &str = "parse <ir_version: 10, opset_import: [\"\" : 18]> ctrlc \
                      (float[512,512] xin) => (float[512,512] y) { y = MatMul(xin, xin) }";

#[test]
fn ctrl_c_stops_a_bench_and_keeps_the_session() {
    let dir = scratch("ctrlc");
    let mut p = shell(&dir);
    enter(&mut p, MATMUL);
    p.exp_string("parsed graph 'ctrlc'").unwrap();
    enter(&mut p, "let K = 7");
    expect_line(&mut p, "K = 7");
    // 100,000 runs take minutes: only Ctrl-C ends it within the timeout
    enter(&mut p, "bench xin=rand(512,512) --runs 100000");
    // the line editor ends the line (terminal back in its normal mode,
    // where Ctrl-C is a signal) before it moves to the next line
    p.exp_regex("--runs 100000[^\n]*\n").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    p.send_control('c').unwrap();
    p.exp_string("interrupted (Ctrl-C)")
        .expect("Ctrl-C stops the bench");
    p.exp_string("onnx> ").expect("back at the prompt");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "Ctrl-C took {:?}",
        started.elapsed()
    );
    // the model, the input set by the bench and the bindings are intact
    enter(&mut p, "inputs");
    p.exp_regex(r"xin\s+float\[512,512\]\s+float\[512, ?512\]")
        .expect("the input is still set");
    enter(&mut p, "eval K*6");
    expect_line(&mut p, "42");
    enter(&mut p, "show");
    p.exp_string("graph: name='ctrlc'").unwrap();
    // Ctrl-C at the prompt clears the line, the shell stays
    p.send("eval 1000").unwrap();
    p.flush().unwrap();
    clear_line(&mut p, "eval 1000");
    enter(&mut p, "eval 5*5");
    expect_line(&mut p, "25");
    enter(&mut p, "quit");
    p.exp_eof().unwrap();
    let history = std::fs::read_to_string(dir.join("history")).unwrap();
    assert!(
        history.contains("bench xin=rand(512,512) --runs 100000"),
        "{history}"
    );
    assert!(!history.contains("eval 1000"), "{history}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bracketed_paste_runs_line_by_line() {
    let dir = scratch("paste");
    let mut p = shell(&dir);
    // a terminal sends a pasted Enter as CR, between the paste brackets
    p.send("\x1b[200~eval 10\reval 20\reval 30\r\x1b[201~")
        .unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    expect_line(&mut p, "10");
    expect_line(&mut p, "20");
    expect_line(&mut p, "30");
    p.exp_string("onnx> ").unwrap();
    enter(&mut p, "eval 40");
    expect_line(&mut p, "40");
    // each pasted command is its own history entry
    let history = std::fs::read_to_string(dir.join("history")).unwrap();
    let entries: Vec<&str> = history.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(entries, ["eval 10", "eval 20", "eval 30", "eval 40"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lines_typed_ahead_run_one_by_one() {
    let dir = scratch("typeahead");
    let mut p = shell(&dir);
    // one write: what a paste without bracketed paste looks like
    p.send("eval 10\reval 20\reval 30\r").unwrap();
    p.flush().unwrap();
    // each command's output comes before the next command is shown
    p.exp_string("eval 10").unwrap();
    expect_line(&mut p, "10");
    p.exp_string("eval 20").unwrap();
    expect_line(&mut p, "20");
    p.exp_string("eval 30").unwrap();
    expect_line(&mut p, "30");
    // lines typed while a command runs (the terminal in its normal mode)
    // wait for the prompt, then run in order
    enter(&mut p, MATMUL);
    p.exp_string("parsed graph 'ctrlc'").unwrap();
    enter(&mut p, "bench xin=rand(512,512) --runs 200");
    p.exp_regex("--runs 200[^\n]*\n").unwrap();
    p.send("eval 40\reval 50\r").unwrap();
    p.flush().unwrap();
    p.exp_regex(r"\n200\s+\d").expect("the bench's table");
    p.exp_string("eval 40").unwrap();
    expect_line(&mut p, "40");
    p.exp_string("eval 50").unwrap();
    expect_line(&mut p, "50");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_open_bracket_continues_on_a_continuation_prompt() {
    let dir = scratch("continue");
    let mut p = shell(&dir);
    enter(&mut p, "eval (2");
    p.exp_string("....> ").expect("the continuation prompt");
    enter(&mut p, "+ 3) * 4");
    expect_line(&mut p, "20");
    p.exp_string("onnx> ").unwrap();
    // Ctrl-C at the continuation prompt drops the unfinished command
    enter(&mut p, "eval (1");
    clear_line(&mut p, "....> ");
    enter(&mut p, "eval 6");
    expect_line(&mut p, "6");
    // the continued command is one history entry
    let text = std::fs::read_to_string(dir.join("history")).unwrap();
    assert_eq!(text, "#V2\neval (2\\n+ 3) * 4\neval 6\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tab_lists_the_candidates() {
    let dir = scratch("tab");
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::write(dir.join("models").join("alpha.onnx"), b"").unwrap();
    std::fs::write(dir.join("models").join("beta.onnx"), b"").unwrap();
    let mut p = shell(&dir);
    // two Tabs on an ambiguous word list every candidate
    p.send("help s\t\t").unwrap();
    p.flush().unwrap();
    p.exp_regex(r"save\s+set\s+shapes\s+show\s+source\s")
        .expect("the commands starting with s, listed");
    clear_line(&mut p, "onnx> help s");
    // a folder completes, and the next Tabs list what is inside
    p.send("load mo\t").unwrap();
    p.flush().unwrap();
    p.exp_string("load models/").unwrap();
    p.send("\t\t").unwrap();
    p.flush().unwrap();
    p.exp_regex(r"alpha\.onnx\s+beta\.onnx")
        .expect("the folder's files, listed");
    clear_line(&mut p, "onnx> load models/");
    // graph input names complete after `run`, with their `=`
    enter(&mut p, "parse <ir_version: 10, opset_import: [\"\" : 18]> g (float[2] xin) => (float[2] y) { y = Neg(xin) }");
    p.exp_string("parsed graph 'g'").unwrap();
    p.send("run x\t").unwrap();
    p.flush().unwrap();
    p.exp_string("run xin=").unwrap();
    enter(&mut p, "[1, -2]");
    p.exp_regex(r"y =[^\n]*\n[^\n]*-1")
        .expect("the run's output");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn history_survives_a_killed_shell() {
    let dir = scratch("kill");
    let mut p = shell(&dir);
    enter(&mut p, "let N = 3");
    expect_line(&mut p, "N = 3");
    enter(&mut p, "eval N*N");
    expect_line(&mut p, "9");
    p.process.kill(Signal::SIGKILL).unwrap();
    let text = std::fs::read_to_string(dir.join("history")).unwrap();
    assert_eq!(text, "#V2\nlet N = 3\neval N*N\n");
    // the next shell reads it back: Up recalls the last command
    let mut p = shell(&dir);
    p.send("\x1b[A\r").unwrap();
    p.flush().unwrap();
    p.exp_string("eval N*N").unwrap();
    p.exp_string("N*N").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn history_defaults_to_the_xdg_state_folder() {
    let dir = scratch("xdg");
    // the file of earlier versions is read once, when there is no other
    std::fs::write(dir.join(".onnx_light_history"), "#V2\neval 1\n").unwrap();
    let mut cmd = command(&dir);
    cmd.env("HOME", &dir);
    let mut p = spawn(cmd);
    enter(&mut p, "eval 2");
    expect_line(&mut p, "2");
    enter(&mut p, "quit");
    p.exp_eof().unwrap();
    let path = dir.join(".local/state/onnx-light/history");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, "#V2\neval 1\neval 2\nquit\n");
    // XDG_STATE_HOME moves it (a new file starts from the old one again)
    let state = dir.join("state");
    let mut cmd = command(&dir);
    cmd.env("HOME", &dir).env("XDG_STATE_HOME", &state);
    let mut p = spawn(cmd);
    enter(&mut p, "eval 3");
    expect_line(&mut p, "3");
    enter(&mut p, "quit");
    p.exp_eof().unwrap();
    let text = std::fs::read_to_string(state.join("onnx-light/history")).unwrap();
    assert_eq!(text, "#V2\neval 1\neval 3\nquit\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn colour_is_decided_per_stream() {
    // stdout a terminal (coloured prompt and tables), stderr a file: the
    // error lines in the file carry no colour codes
    let dir = scratch("colour");
    let log = dir.join("err.log");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "exec '{}' 2>'{}'",
            env!("CARGO_BIN_EXE_onnx-light"),
            log.display()
        ))
        .current_dir(&dir)
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .env("ONNX_LIGHT_HISTORY", dir.join("history"));
    let mut p = spawn(cmd);
    enter(&mut p, "bogus");
    enter(&mut p, "eval 41+1");
    expect_line(&mut p, "42");
    enter(&mut p, "quit");
    p.exp_eof().unwrap();
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(err.contains("error: unknown command 'bogus'"), "{err}");
    assert!(
        !err.contains('\x1b'),
        "colour codes in a redirected stderr: {err:?}"
    );
}
