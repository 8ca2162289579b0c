//! The binary's contract (SPEC §1): exit codes, script errors, clear
//! one-line errors for bad input, and no panics.

use crate::common;

use common::{cmds, run, SEED};

const RELU: &str = "parse g (float[N,4] x) => (float[N,4] y) { y = Relu(x) }";

#[test]
fn syntax_error_has_line_col_and_caret() {
    let o = cmds("parse agraph (float[N] x) => (float[N] y) { y = Relu(x,,) z }");
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("-c:1: error: line 1:55: expected '='"),
        "{}",
        o.stderr
    );
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(
        lines[1],
        "  agraph (float[N] x) => (float[N] y) { y = Relu(x,,) z }"
    );
    assert_eq!(lines[2].find('^'), Some(2 + 54));
}

#[test]
fn session_survives_errors_interactively() {
    // stdin that is not a terminal is a script; --keep-going continues
    let script = format!("parse g ( => ) {{ }}\nshwo\n{SEED}\nrun x=arange(8).reshape(2,4)\n");
    let o = run(&["--no-color", "--keep-going"], Some(&script));
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("<stdin>:1: error: line 1:"),
        "{}",
        o.stderr
    );
    assert!(o
        .stderr
        .contains("<stdin>:2: error: unknown command 'shwo'; did you mean 'show'?"));
    assert!(o.stdout.contains("[18. 21.]]"), "{}", o.stdout);
}

#[test]
fn script_stops_at_first_error() {
    let dir = std::env::temp_dir().join(format!("onnx-light-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.repl");
    std::fs::write(&p, "let N = 3\n\n# comment\nbogus\nlet M = 2\n").unwrap();
    let ps = p.to_string_lossy().to_string();
    let o = run(&["--no-color", &ps], None);
    assert_eq!(o.code, 1);
    // status lines go to stderr: stdout holds only data (none here)
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr.trim(),
        format!("N = 3\n{ps}:4: error: unknown command 'bogus' (try 'help')")
    );
    let o = run(&["--no-color", "--keep-going", &ps], None);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("M = 2"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_invocations_exit_2() {
    assert_eq!(run(&["--bogus"], None).code, 2);
    assert_eq!(run(&["-c"], None).code, 2);
    assert_eq!(run(&["/nonexistent/x.repl"], None).code, 2);
    assert_eq!(run(&["test"], None).code, 2);
    assert_eq!(run(&["test", "/nonexistent"], None).code, 2);
}

#[test]
fn run_errors_name_the_input() {
    let o = cmds("run");
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("no model"), "{}", o.stderr);
    let o = cmds(&format!("{RELU}; run"));
    assert!(o.stderr.contains("input x not set"), "{}", o.stderr);
    let o = cmds(&format!("{RELU}; run x=arange(4)"));
    assert!(
        o.stderr.contains("input 'x' is declared with rank 2"),
        "{}",
        o.stderr
    );
    let o = cmds(&format!("{RELU}; run q=arange(4)"));
    assert!(o.stderr.contains("'q' is not an input"), "{}", o.stderr);
    let o = cmds(&format!("{RELU}; run x=[\"a\", \"b\"]"));
    assert!(
        o.stderr.contains("input 'x' is declared float"),
        "{}",
        o.stderr
    );
    let o = cmds(&format!("{RELU}; let N = 3; run x=zeros(2, 4)"));
    assert!(
        o.stderr
            .contains("input 'x' axis 0: N is bound to 3, but the input has 2"),
        "{}",
        o.stderr
    );
}

#[test]
fn run_binds_symbols_and_reruns() {
    let o = cmds(&format!(
        "{RELU}; run x=ones(2, 4); let; run x=ones(3, 4); let; eval N*2"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.trim_end().ends_with('6'), "{}", o.stdout);
}

#[test]
fn print_and_inputs() {
    let o = cmds(&format!(
        "{SEED}\nset x = arange(8).reshape(2,4)\ninputs\nrun\nprint y\nprint two\nprint z"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("y =\n[[ 0.  3.]"), "{}", o.stdout);
    assert!(o.stdout.contains("two =\n2."), "{}", o.stdout);
    let o = cmds(&format!(
        "{SEED}\nconfig release on\nrun x=zeros(1,4)\nprint z"
    ));
    assert!(o.stderr.contains("'z' was released"), "{}", o.stderr);
}

#[test]
fn save_and_load_both_forms() {
    let dir = std::env::temp_dir().join(format!("onnx-light-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("m.onnx");
    let txt = dir.join("m.txt");
    let o = cmds(&format!(
        "{SEED}\nsave {}\nsave {}\nload {}\nrun x=arange(8).reshape(2,4)\nload {}\nshow",
        bin.display(),
        txt.display(),
        bin.display(),
        txt.display()
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("[18. 21.]]"));
    assert!(o.stdout.contains("2: Reshape(w, target_shape) -> y"));
    let o = cmds("load /nonexistent/model.onnx");
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("/nonexistent/model.onnx"), "{}", o.stderr);
    std::fs::write(dir.join("bad.onnx"), b"\xff\xff\xff\xff garbage").unwrap();
    let o = cmds(&format!("load {}", dir.join("bad.onnx").display()));
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("not a valid ONNX protobuf model"),
        "{}",
        o.stderr
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn help_covers_every_command() {
    let o = cmds("help");
    assert_eq!(o.code, 0);
    for c in onnx_light::repl::commands::COMMANDS {
        assert!(o.stdout.contains(&c.usage()), "help lists {}", c.name);
        let h = cmds(&format!("help {}", c.name));
        assert!(h.stdout.starts_with(&format!("usage: {}", c.usage())));
    }
    assert!(cmds("help shwo").stderr.contains("did you mean 'show'"));
}

#[test]
fn hostile_inputs_do_not_panic() {
    for c in [
        "eval 9223372036854775807+1",
        "eval 1//0",
        "eval (((((((((((((((((((((((((((((((((((((((((1",
        "let = 3",
        "let N = N",
        "set",
        "run x=zeros(100000000000, 100000000000)",
        "config threads 0",
        "config max-values -1",
        "events",
        "check",
        "print",
        "source /dev/null",
        "load /dev/null",
        "parse {",
        "parse <ir_version: 99999999999999999999999>",
        "bench --runs abc",
    ] {
        let o = cmds(c);
        assert!(o.code == 0 || o.code == 1, "{c}: exit {}", o.code);
    }
}

#[test]
fn tensor_data_survives_every_save_form() {
    // binary with external data -> text with values -> text with external
    // data -> binary: each reload runs to the same result
    let dir = std::env::temp_dir().join(format!("onnx-light-forms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    let run_line = "run x=arange(8).reshape(2,4)";
    let o = cmds(&format!(
        "{SEED}\nsave {} --external-threshold 0\nload {}\n{run_line}\nsave {}\nload {}\n{run_line}\n\
         save {} --external-threshold 8\nload {}\n{run_line}\nsave {}\nload {}\n{run_line}",
        p("ext.onnx"),
        p("ext.onnx"),
        p("values.txt"),
        p("values.txt"),
        p("ext.txt"),
        p("ext.txt"),
        p("back.onnx"),
        p("back.onnx"),
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.matches("[18. 21.]]").count(), 4, "{}", o.stdout);
    assert!(dir.join("ext.onnx.data").is_file());
    assert!(dir.join("ext.txt.data").is_file());
    let text = std::fs::read_to_string(dir.join("ext.txt")).unwrap();
    assert!(text.contains("\"location\": \"ext.txt.data\""), "{text}");
    let values = std::fs::read_to_string(dir.join("values.txt")).unwrap();
    assert!(!values.contains("= {}"), "{values}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_input_names_list_the_closest_inputs_only() {
    let inputs: Vec<String> = (0..12).map(|i| format!("float[1] in{i}")).collect();
    let sum: Vec<String> = (0..12).map(|i| format!("in{i}")).collect();
    let model = format!(
        "parse g ({}, float[1] w) => (float[1] y) <float[1] w = {{1.0}}> {{ y = Sum({}, w) }}",
        inputs.join(", "),
        sum.join(", ")
    );
    let o = run(
        &["--no-color", "-c", &format!("{model}\nrun in_7=[1.0]")],
        None,
    );
    assert_eq!(o.code, 1);
    let err = o.stderr.lines().last().unwrap();
    // the graph inputs to set, closest first; not the initializer 'w'
    assert!(
        err.ends_with("'in_7' is not an input of the model (closest inputs: in7, in0, in1, in10, in11, in2, in3, in4, and 4 more)"),
        "{err}"
    );
    let o = run(&["--no-color", "-c", &format!("{model}\nprint in3")], None);
    assert!(
        o.stderr
            .contains("input 'in3' is not set yet (use 'set in3 = TENSOR' or 'run in3=TENSOR')"),
        "{}",
        o.stderr
    );
}

#[test]
fn an_empty_removal_log_says_release_was_off() {
    let model = "parse g (float[2] x) => (float[2] y) { z = Neg(x)\n y = Neg(z) }";
    let o = run(
        &[
            "--no-color",
            "-c",
            &format!("{model}\nrun x=[1.0,2.0]\nevents --action remove"),
        ],
        None,
    );
    assert!(
        o.stdout
            .contains("0 events (that run released nothing: release is off"),
        "{}",
        o.stdout
    );
    let o = run(
        &[
            "--no-color",
            "-c",
            &format!("{model}\nrun --release x=[1.0,2.0]\nevents --action remove"),
        ],
        None,
    );
    assert!(
        o.stdout.contains("1 event") && !o.stdout.contains("released nothing"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_failing_sourced_script_keeps_its_output_and_one_location() {
    let dir = std::env::temp_dir().join(format!("onnx-light-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inner = dir.join("inner.repl");
    let outer = dir.join("outer.repl");
    let me = dir.join("self.repl");
    std::fs::write(&inner, "eval 10\neval foo(1)\neval 11\n").unwrap();
    let (i, o, m) = (
        inner.to_string_lossy().to_string(),
        outer.to_string_lossy().to_string(),
        me.to_string_lossy().to_string(),
    );
    std::fs::write(&outer, format!("eval 1\nsource {i}\neval 2\n")).unwrap();
    std::fs::write(&me, format!("source {m}\n")).unwrap();
    let r = run(&["--no-color", &o], None);
    assert_eq!(r.code, 1);
    // the lines before the error printed their output; the error names
    // the inner line once and where it was sourced from
    assert_eq!(r.stdout, "1\n10\n");
    assert!(
        r.stderr
            .starts_with(&format!("{i}:2: error: unknown function 'foo'")),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.ends_with(&format!("  sourced from {o}:2\n")),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.matches("error:").count(), 1, "{}", r.stderr);
    // a script that sources itself stops at a depth, in one short message
    let r = run(&["--no-color", &m], None);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr.matches("error:").count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("nested more than 16 deep"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!("sourced from {m}:1 (×16)")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.lines().count() <= 3, "{}", r.stderr);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn arguments_run_in_the_order_given() {
    let dir = std::env::temp_dir().join(format!("onnx-light-args-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let five = dir.join("five.repl");
    let bad = dir.join("bad.repl");
    std::fs::write(&five, "eval 5\n").unwrap();
    std::fs::write(&bad, "eval 1\nbogus\neval 2\n").unwrap();
    let (f, b) = (
        five.to_string_lossy().to_string(),
        bad.to_string_lossy().to_string(),
    );
    // -c and scripts in the order given, `-` is standard input, `--` ends options
    let o = run(
        &["--no-color", &f, "-c", "eval 7", "-", "--", &f],
        Some("eval 9\n"),
    );
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "5\n7\n9\n5\n"),
        "{}",
        o.stderr
    );
    // --keep-going goes on after a failing line and to the next script; exit 1
    let o = run(&["--no-color", "--keep-going", &b, &f], None);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (1, "1\n2\n5\n"),
        "{}",
        o.stderr
    );
    // without it the first failure ends everything
    let o = run(&["--no-color", &b, &f], None);
    assert_eq!((o.code, o.stdout.as_str()), (1, "1\n"), "{}", o.stderr);
    // `help` and `help COMMAND` as a subcommand, after global flags too
    let o = run(&["--no-color", "help"], None);
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with("usage:") && o.stdout.contains("commands:"));
    let o = run(&["help", "bench"], None);
    assert!(o.stdout.contains("--runs"), "{}", o.stdout);
    let o = run(&["-", "-"], None);
    assert_eq!(o.code, 2);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn event_values_keep_their_type_and_strings_their_quotes() {
    let o = cmds(
        "parse g (int64[N] a, float[M] f, string[K] s) => (int64[N] b) { b = Identity(a) }; \
         run a=[9007199254740993, -1] f=[1.7, 2] s=[\"quote\\\"\", \"it's\", \"a b\"]; \
         print s; events --kind input; events --kind input --format json; events --kind input --format csv",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    // print and the events table quote strings as Python does
    assert!(out.contains(r#"['quote"' "it's" 'a b']"#), "{out}");
    assert!(out.contains(r#"['quote"', "it's", 'a b']"#), "{out}");
    // the table prints integers whole, type names, floats at the precision
    assert!(
        out.contains("int64      [2]    2            [9007199254740993, -1]"),
        "{out}"
    );
    // JSON keeps int64 exact and float32 short
    let json_start = out.find("\n[\n").unwrap() + 1;
    let json_end = out[json_start..].find("\n]").unwrap() + json_start + 2;
    let v: serde_json::Value = serde_json::from_str(&out[json_start..json_end]).unwrap();
    assert_eq!(v[0]["values"].to_string(), "[9007199254740993,-1]");
    assert_eq!(v[1]["values"].to_string(), "[1.7,2.0]");
    assert_eq!(v[2]["string_values"][0], "quote\"");
    // CSV: lists as JSON arrays, quoted by the CSV rules
    assert!(
        out.contains(r#",7,[2],2,"[9007199254740993,-1]","#),
        "{out}"
    );
    assert!(
        out.contains(r#","[""quote\"""",""it's"",""a b""]","#),
        "{out}"
    );
}

#[test]
fn large_tensors_print_summarised_and_export_whole() {
    let dir = std::env::temp_dir().join(format!("onnx-light-print-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let npy = dir.join("a.npy");
    let csv = dir.join("a.csv");
    let o = cmds(&format!(
        "parse g (float[N] a) => (float[N] b) {{ b = Identity(a) }}; run a=arange(2000); \
         print a --full; print a --format npy --out {}; print a --format csv --out {}; \
         config line-width 30; config print-threshold 4; print a; \
         run a=npy(\"{}\")",
        npy.display(),
        csv.display(),
        npy.display()
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    // the run prints the output summarised: edge items around `...`
    assert!(
        o.stdout
            .contains("[   0.    1.    2. ... 1997. 1998. 1999.]  # float (2000,)"),
        "{}",
        o.stdout
    );
    // --full prints all 2000 values wrapped to 75 columns
    let full = o.stdout.split("a =\n").nth(1).unwrap();
    let full = &full[..full.find('#').unwrap()];
    assert_eq!(
        full.replace(['[', ']'], " ").split_whitespace().count(),
        2000
    );
    assert!(full.lines().all(|l| l.chars().count() <= 75), "{full}");
    // the exports hold every element; .npy reads back
    let bytes = std::fs::read(&npy).unwrap();
    assert!(bytes.starts_with(b"\x93NUMPY") && bytes.ends_with(&1999f32.to_le_bytes()));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.trim_end().split(',').count(), 2000);
    assert!(text.trim_end().ends_with(",1999.0"));
    // narrower lines with the threshold lowered
    let last = o.stdout.rsplit("a =\n").next().unwrap();
    let last = &last[..last.find('#').unwrap()];
    assert!(last.lines().count() > 1 && last.contains(" ... "), "{last}");
    assert!(last.lines().all(|l| l.chars().count() <= 30), "{last}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dotted_and_quoted_symbols_bind_and_evaluate() {
    let o = cmds(
        "parse g (float[\"p2o.DynamicDimension.0\",4] x) => (float[\"p2o.DynamicDimension.0\",4] y) { y = Relu(x) }; \
         infer; let p2o.DynamicDimension.0 = 3; eval p2o.DynamicDimension.0 * 2; \
         let \"batch size\" = 4; eval \"batch size\" + \"p2o.DynamicDimension.0\"; eval \"batch size\" + M; \
         unlet \"batch size\"; eval \"batch size\"",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("float[p2o.DynamicDimension.0,4]"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("\n6\n7\nM+4\n\"batch size\"\n"),
        "{}",
        o.stdout
    );
    assert!(o.stderr.contains("\"batch size\" = 4"), "{}", o.stderr);
    let o = cmds("let a..b = 1");
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("quote other names"), "{}", o.stderr);
}

#[test]
fn a_failed_run_keeps_its_log_and_a_mismatch_fails_check() {
    let o = run(
        &["--no-color", "--keep-going"],
        Some(
            "parse g (float[N] x, int64[K] shp) => (float[M] y) { z = Relu(x)\n w = Reshape(z, shp)\n y = Neg(w) }\n\
             run x=[1,2,3] shp=[4]\nevents\nprint z\nevents --format json --kind node\n",
        ),
    );
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("node 1 (Reshape): cannot reshape"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("the run stopped there"), "{}", o.stderr);
    // the log up to the failing node, marked; the values held then
    assert!(
        o.stdout
            .contains("4 events\nthe run failed, the log ends there: node 1 (Reshape)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("z =\n[1. 2. 3.]"), "{}", o.stdout);
    assert!(o.stdout.contains("\"op_type\": \"Relu\""), "{}", o.stdout);
    // a MISMATCH prints the table and fails the command: exit 1
    let o = cmds("parse g (float[N] x) => (float[N] y) { y = Relu(x) }; run x=[1,2,3]; let N = 5; check; eval 1");
    assert_eq!(o.code, 1);
    assert!(
        o.stdout.contains("0 OK, 1 MISMATCH, 0 UNKNOWN"),
        "{}",
        o.stdout
    );
    assert!(
        !o.stdout.ends_with("1\n"),
        "the script goes no further: {}",
        o.stdout
    );
    assert!(
        o.stderr.contains("-c:4: error: check: 1 value"),
        "{}",
        o.stderr
    );
}

#[test]
fn let_warns_when_it_contradicts_an_equation() {
    let o = cmds(
        "parse g (float[N] x) => (float[M] y) { y = Concat<axis=0>(x, x) }; infer; let N = 2; let M = 5; let M = 4",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("warning: inference found M = 2*N, which is 4 with N = 2; M is now 5"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stderr.matches("warning:").count(), 1, "{}", o.stderr);
}

#[test]
fn events_with_shapes_join_the_log_and_check() {
    let o = cmds(&format!(
        "{SEED}; run --release x=arange(8).reshape(2,4); events --shapes --kind intermediate,output; \
         events --shapes --kind output --format json"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("inferred  resolved  status"),
        "{}",
        o.stdout
    );
    let y = o
        .stdout
        .lines()
        .find(|l| l.contains("output") && l.contains(" y "))
        .unwrap();
    assert!(y.ends_with("(M, 2)    (4, 2)    OK"), "{y}");
    // removals carry no shape columns
    let rm = o.stdout.lines().find(|l| l.contains("remove")).unwrap();
    assert!(!rm.contains("OK"), "{rm}");
    assert!(o.stdout.contains("\"status\": \"OK\""), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("\"resolved\": [\n      4,\n      2\n    ]"),
        "{}",
        o.stdout
    );
}

#[test]
fn print_stats_counts_nan_and_inf_and_skips_them_in_the_moments() {
    let o = cmds(
        "parse g (float[N] x) => (float[N] y) { y = Log(x) }; run x=[1, 2, 0, -1, 10]; \
         print y --stats --format json; print x --stats",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let start = o.stdout.find("{\n").expect("json");
    let end = o.stdout[start..].find("\n}").expect("json end") + start + 2;
    let v: serde_json::Value = serde_json::from_str(&o.stdout[start..end]).unwrap();
    assert_eq!((v["nan"].as_u64(), v["inf"].as_u64()), (Some(1), Some(1)));
    assert_eq!(v["min"].as_f64(), Some(0.0));
    assert!((v["max"].as_f64().unwrap() - 10f64.ln()).abs() < 1e-6);
    assert!(
        o.stdout.contains("x     float      (5,)   -1.  10."),
        "{}",
        o.stdout
    );
    let o = cmds("parse g (string[N] s) => (string[N] t) { t = Identity(s) }; run s=[\"a\"]; print t --stats");
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("holds strings"), "{}", o.stderr);
}
