//! The hostile-input corpus: each class of attack from the robustness
//! issue, run through the binary, must end in a clear error (never a panic,
//! an abort, a signal or a hang) and leave the session usable.
//!
//! `tests/hostile/*.repl` are scripts with their expectations inline:
//! `# expect: TEXT` must appear in stderr, `# expect-out: TEXT` in stdout.
//! `@TMP@` stands for a fresh folder holding a FIFO named `fifo` that no
//! one writes to. Inputs too large to keep as files (deep nesting, huge
//! ranks, long chains) are generated below and run the same way.
//!
//! Each script gets [`BOUND`] to finish: a hang guard, not a speed test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one script may run before it counts as hung.
const BOUND: Duration = Duration::from_secs(120);

struct Outcome {
    stdout: String,
    stderr: String,
}

/// A fresh folder for one test, with a FIFO named `fifo` in it.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("onnx-light-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().expect("a UTF-8 temp path")).expect("no NUL");
    // SAFETY: mkfifo reads a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", fifo.display());
    dir
}

/// Runs `onnx-light --no-color --keep-going SCRIPT`, failing the test on a
/// signal (abort, stack overflow), a panic message or a run past [`BOUND`].
fn run_script(script: &Path) -> Outcome {
    let dir = std::env::temp_dir();
    let out_path = dir.join(format!("{}.stdout", script.display()).replace('/', "_"));
    let err_path = dir.join(format!("{}.stderr", script.display()).replace('/', "_"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_onnx-light"))
        .args(["--no-color", "--keep-going"])
        .arg(script)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("a stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("a stderr file"))
        .spawn()
        .expect("the binary starts");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting on the binary") {
            break s;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} ran past {BOUND:?}: a hang", script.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let o = Outcome {
        stdout: read(&out_path),
        stderr: read(&err_path),
    };
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    assert!(
        status.code().is_some(),
        "{} ended by a signal ({status}):\n{}",
        script.display(),
        tail(&o.stderr)
    );
    for bad in [
        "panicked at",
        "memory allocation of",
        "has overflowed its stack",
    ] {
        assert!(
            !o.stderr.contains(bad) && !o.stdout.contains(bad),
            "{}: '{bad}':\n{}",
            script.display(),
            tail(&o.stderr)
        );
    }
    o
}

/// The end of a long output, for failure messages.
fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(20).collect();
    t.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// Checks the `# expect:` and `# expect-out:` lines of `text` against `o`.
fn check_expectations(name: &str, text: &str, o: &Outcome) -> usize {
    let mut n = 0;
    for line in text.lines() {
        let (want, stream, which) = if let Some(w) = line.strip_prefix("# expect-out:") {
            (w.trim(), &o.stdout, "stdout")
        } else if let Some(w) = line.strip_prefix("# expect:") {
            (w.trim(), &o.stderr, "stderr")
        } else {
            continue;
        };
        assert!(
            stream.contains(want),
            "{name}: {which} lacks '{want}'\n--- stderr:\n{}\n--- stdout:\n{}",
            tail(&o.stderr),
            tail(&o.stdout)
        );
        n += 1;
    }
    n
}

#[test]
fn the_hostile_corpus_ends_in_clear_errors() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("tests/hostile exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "repl"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the corpus has {} scripts", files.len());
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let dir = scratch(name.trim_end_matches(".repl"));
        let text = std::fs::read_to_string(f)
            .expect("a readable script")
            .replace("@TMP@", dir.to_str().expect("a UTF-8 temp path"));
        let script = dir.join(&name);
        std::fs::write(&script, &text).expect("the script is written");
        let o = run_script(&script);
        let n = check_expectations(&name, &text, &o);
        assert!(n > 0, "{name} has no '# expect' lines");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

const RELU: &str = "parse <ir_version: 8, opset_import: [\"\" : 17]>\n  \
                    g (float[?] x) => (float[?] y) { y = Relu(x) }\n";

/// Runs a generated script; returns its outcome.
fn run_generated(name: &str, text: &str) -> Outcome {
    let dir = scratch(name);
    let script = dir.join(format!("{name}.repl"));
    std::fs::write(&script, text).expect("the script is written");
    let o = run_script(&script);
    let _ = std::fs::remove_dir_all(&dir);
    o
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let list = format!("run x={}1.0{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let parens = format!(
        "run x={}rand(2){}\n",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    let dims = format!("eval {}N{}\n", "(".repeat(100_000), ")".repeat(100_000));
    let text = format!("{RELU}{list}{parens}{dims}eval 1+1\n");
    let o = run_generated("nesting", &text);
    let lines: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains(": error:"))
        .collect();
    assert_eq!(lines.len(), 3, "{}", tail(&o.stderr));
    assert!(
        lines[0].contains("nested deeper than 256 levels"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("nested deeper than 256 levels"),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("nested too deeply"), "{}", lines[2]);
    assert!(o.stdout.lines().any(|l| l.trim() == "2"), "{}", o.stdout);
}

#[test]
fn a_rank_100000_tensor_prints_flat() {
    let n = 100_000;
    let ones = vec!["1"; n].join(",");
    let text = format!(
        "parse <ir_version: 8, opset_import: [\"\" : 17]>\n  \
         g (float[1] x) => (float[?] y) <int64[{n}] s = {{{ones}}}> {{ y = Reshape(x, s) }}\n\
         run x=[2.5]\neval 1+1\n"
    );
    let o = run_generated("rank", &text);
    assert!(
        o.stdout.contains("rank-100000 tensor of shape (1, 1,"),
        "{}",
        tail(&o.stdout)
    );
    assert!(
        o.stdout.lines().any(|l| l.trim() == "2"),
        "{}",
        tail(&o.stdout)
    );
}

#[test]
fn check_on_a_100000_node_chain_finishes() {
    let n = 100_000;
    let mut text = String::from(
        "parse <ir_version: 8, opset_import: [\"\" : 17]>\n  g (float[N,4] x) => (float[N,4] y) {\n",
    );
    let mut prev = "x".to_string();
    for i in 0..n - 1 {
        text.push_str(&format!("    v{i} = Relu({prev})\n"));
        prev = format!("v{i}");
    }
    text.push_str(&format!(
        "    y = Relu({prev})\n  }}\ninfer\nrun x=rand(2,4)\ncheck\n"
    ));
    let o = run_generated("chain", &text);
    assert!(
        o.stdout.contains(&format!("{n} OK, 0 MISMATCH, 0 UNKNOWN")),
        "{}",
        tail(&o.stdout)
    );
}

#[test]
fn twenty_thousand_lets_finish() {
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!("let S{i} = {i}\n"));
    }
    text.push_str("eval S19999 + S1\n");
    let o = run_generated("lets", &text);
    assert!(
        o.stdout.lines().any(|l| l.trim() == "20000"),
        "{}",
        tail(&o.stdout)
    );
}

#[test]
fn ctrl_c_stops_a_runaway_loop_and_ends_the_script() {
    let dir = scratch("ctrl_c");
    let script = dir.join("runaway.repl");
    let text = "parse <ir_version: 8, opset_import: [\"\" : 17]>\n  \
        g (float[1] x) => (float[1] y) <bool c = {1}> {\n    \
        y = Loop(, c, x) <body = b (int64 i, bool cin, float[1] xin) => (bool cout, float[1] xout) {\n      \
        cout = Identity(cin)\n      xout = Identity(xin)\n    }>\n  }\n\
        config events off\nconfig max-iterations 1000000000000\neval 6*7\nrun x=rand(1)\neval 1+1\n";
    std::fs::write(&script, text).expect("the script is written");
    let mut child = Command::new(env!("CARGO_BIN_EXE_onnx-light"))
        .args(["--no-color", "--keep-going"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // the line before `run` prints 42: once it is out, the loop is starting
    // (a fixed sleep from spawn raced a loaded machine's slow start)
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut before = String::new();
    let started = Instant::now();
    while !before.lines().any(|l| l.trim() == "42") {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stdout, &mut line).expect("stdout reads");
        assert!(
            n > 0 && started.elapsed() < BOUND,
            "no 42 before the run: {before}"
        );
        before.push_str(&line);
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
    let started = Instant::now();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("stdout reads");
    let out = child.wait_with_output().expect("the binary finishes");
    assert!(started.elapsed() < BOUND);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = before + &rest;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // `run` stops like at a breakpoint (inside the Loop body); the script
    // ends at that line
    assert!(
        stderr.contains("runaway.repl:11: interrupted (Ctrl-C)"),
        "{stderr}"
    );
    assert!(
        stdout.contains("in the body of 'Loop'") && stdout.contains("[Ctrl-C]"),
        "{stdout}"
    );
    // the script ends there, even with --keep-going
    assert!(!stdout.lines().any(|l| l.trim() == "2"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
