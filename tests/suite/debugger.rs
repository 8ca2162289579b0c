//! The model debugger's execution control: `break`, `breaks`, `delete`,
//! `step`, `continue`, `finish`, `where`, `watch`, printing values alive at
//! a stop, conditions on value statistics, a stop inside a Loop body, and
//! Ctrl-C stopping a run like a breakpoint. Real models come from
//! `../shared/models` (skipped loudly when absent, unless
//! `ONNX_LIGHT_REQUIRE_DATA` is set).

use crate::common;

use common::{cmds, data_missing, run, SEED};
use std::path::PathBuf;

/// A model folder of `../shared/models`, with its first input file.
fn model(name: &str) -> Option<(PathBuf, PathBuf)> {
    let dir = common::root().join("../shared/models").join(name);
    let m = dir.join("model.onnx");
    let x = dir.join("test_data_set_0/input_0.pb");
    if m.is_file() && x.is_file() {
        Some((m, x))
    } else {
        data_missing(&format!("{} is missing", dir.display()));
        None
    }
}

fn squeezenet_prelude() -> Option<String> {
    let (m, x) = model("light_squeezenet")?;
    Some(format!(
        "load {}; set data_0 = pb(\"{}\")",
        m.display(),
        x.display()
    ))
}

/// Runs commands, going on after a failing one.
fn keep_going(c: &str) -> common::Output {
    run(&["--no-color", "--keep-going", "-c", c], None)
}

/// The first pretty-printed JSON object of `out`.
fn first_json(out: &str) -> serde_json::Value {
    let start = out.find("{\n").expect("a JSON object");
    let end = out[start..].find("\n}").expect("its end") + start + 2;
    serde_json::from_str(&out[start..end]).expect("valid JSON")
}

#[test]
fn a_conv_breakpoint_stops_before_every_conv_and_continue_reaches_the_end() {
    let Some(pre) = squeezenet_prelude() else {
        return;
    };
    let show = cmds(&format!("{pre}; show"));
    assert_eq!(show.code, 0, "{}", show.stderr);
    let convs: Vec<String> = show
        .stdout
        .lines()
        .filter_map(|l| {
            let (idx, rest) = l.trim().split_once(": ")?;
            rest.starts_with("Conv(").then(|| idx.to_string())
        })
        .collect();
    assert!(convs.len() >= 10, "{}", show.stdout);
    let conts = vec!["continue"; convs.len()].join("; ");
    let o = cmds(&format!(
        "{pre}; break --op Conv; run; {conts}; breaks; print softmaxout_1 --stats"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let stops: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("stopped before #"))
        .collect();
    assert_eq!(stops.len(), convs.len(), "{}", o.stdout);
    for (stop, idx) in stops.iter().zip(&convs) {
        assert!(
            stop.starts_with(&format!("stopped before #{idx} Conv '")),
            "{stop} (expected node {idx})"
        );
    }
    // the last continue completed the run: outputs printed, last_run kept
    assert!(o.stdout.contains("softmaxout_1 =\n"), "{}", o.stdout);
    assert!(o
        .stdout
        .contains(&format!("1  break  --op Conv  {}", convs.len())));
    assert!(o.stdout.contains("softmaxout_1  float"), "{}", o.stdout);
}

#[test]
fn finish_after_steps_gives_the_outputs_of_a_plain_run() {
    let Some(pre) = squeezenet_prelude() else {
        return;
    };
    let plain = cmds(&format!(
        "{pre}; run; print softmaxout_1 --format json; events --action run_node --format csv"
    ));
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let o = cmds(&format!(
        "{pre}; break --node #45; run; step 3; where --format json; step; finish; print softmaxout_1 --format json; events --action run_node --format csv"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("stopped before #45 "), "{}", o.stdout);
    // three nodes later (node order is the plan's: check with where)
    let w = first_json(&o.stdout);
    let mut keys: Vec<&str> = w.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, vec!["alive", "inputs", "node"]);
    let node = &w["node"];
    for k in ["index", "op_type", "domain", "name"] {
        assert!(node.get(k).is_some(), "{node}");
    }
    let idx = node["index"].as_u64().unwrap();
    assert!(
        o.stdout.contains(&format!("stopped before #{idx} ")),
        "{}",
        o.stdout
    );
    let inputs = w["inputs"].as_array().unwrap();
    assert!(!inputs.is_empty());
    for i in inputs {
        for k in [
            "name",
            "elem_type",
            "shape",
            "min",
            "max",
            "mean",
            "std",
            "nan",
            "inf",
        ] {
            assert!(i.get(k).is_some(), "{i}");
        }
        assert_eq!(i["nan"], 0);
    }
    let alive = w["alive"].as_array().unwrap();
    assert!(alive
        .iter()
        .any(|a| a["name"] == "data_0" && a["bytes"] == 3 * 224 * 224 * 4));
    // same outputs and the same event log shape as a plain run
    let json_of = |out: &str| {
        let s = out
            .find("{\n  \"name\": \"softmaxout_1\"")
            .expect("print json");
        let e = out[s..].find("\n}").unwrap() + s + 2;
        out[s..e].to_string()
    };
    assert_eq!(json_of(&o.stdout), json_of(&plain.stdout));
    let nodes = |out: &str| out.lines().filter(|l| l.contains(",run_node,")).count();
    assert_eq!(nodes(&o.stdout), nodes(&plain.stdout));
    assert!(nodes(&plain.stdout) > 50);
}

#[test]
fn value_and_condition_breakpoints_stop_after_the_writer() {
    let Some(pre) = squeezenet_prelude() else {
        return;
    };
    let o = cmds(&format!(
        "{pre}; break --value r5; break --if \"isnan(z)\"; breaks; run; where; print r5 --stats; print r4 --stats; continue; breaks --format json"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("stopped after #44 Conv 'n5' (wrote 'r5') [breakpoint 1]"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("r5    float"), "{}", o.stdout);
    assert!(o.stdout.contains("r4    float"), "{}", o.stdout);
    // isnan never fires: the run completes
    assert!(o.stdout.contains("softmaxout_1 =\n"), "{}", o.stdout);
    let j: serde_json::Value = {
        let s = o.stdout.rfind("[\n").unwrap();
        serde_json::from_str(&o.stdout[s..]).unwrap()
    };
    assert_eq!(j[0]["hits"], 1);
    assert_eq!(j[1]["hits"], 0);
    // a condition that holds somewhere: the first value with a large entry
    let o = cmds(&format!(
        "{pre}; break --if \"max(abs(z)) > 1 and not isnan(z)\"; run; where --format json"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("stopped after #"))
        .expect("a stop");
    assert!(line.contains("(wrote '"), "{line}");
}

#[test]
fn bad_input_gives_clear_errors() {
    let o = keep_going(&format!(
        "{SEED}; where; step abc; step 0; continue; finish; break; break --if \"max(z) >\"; break --if \"foo(z)\"; break --node #x; break --op; delete 7; delete x; unwatch q; break --bogus 1"
    ));
    let e = &o.stderr;
    for want in [
        "no run is stopped",
        "step: expected a count of nodes (1 or more), got 'abc'",
        "got '0'",
        "usage: break",
        "break --if \"max(z) >\": column 9",
        "break --if \"foo(z)\": column 1",
        "expected a node index",
        "--op needs a value",
        "no breakpoint or watch 7",
        "delete: expected a breakpoint number (see 'breaks'), got 'x'",
        "'q' is not watched",
        "unknown flag --bogus",
    ] {
        assert!(e.contains(want), "missing '{want}' in:\n{e}");
    }
    // a refused condition sets nothing
    let o = keep_going(&format!("{SEED}; break --if \"isnan(\"; breaks"));
    assert!(
        o.stdout.contains("no breakpoints or watches"),
        "{}",
        o.stdout
    );
}

#[test]
fn watch_prints_statistics_each_write_and_delete_removes() {
    let o = cmds(&format!(
        "{SEED}; watch z; break --op Add; breaks; run x=[[1.,2.,3.,4.]]; print z; print x --stats; continue; delete 2; run x=[[1.,2.,3.,-4.]]; unwatch z; breaks"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let watch: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("watch 'z'"))
        .collect();
    assert_eq!(watch.len(), 2, "{}", o.stdout);
    assert!(
        watch[0].contains("min 2.000000 max 8.000000"),
        "{}",
        watch[0]
    );
    assert!(
        watch[1].contains("min -8.000000 max 6.000000"),
        "{}",
        watch[1]
    );
    assert!(o.stdout.contains("stopped before #1 Add"), "{}", o.stdout);
    assert!(o.stdout.contains("z =\n[[2. 4. 6. 8.]]"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("y =\n").count(), 2, "{}", o.stdout);
    assert!(
        o.stdout.ends_with("no breakpoints or watches\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn model_changes_and_a_new_run_abandon_the_paused_run() {
    let o = keep_going(&format!(
        "{SEED}; break --op Add; run x=[[1.,2.,3.,4.]]; run x=[[1.,2.,3.,4.]]; set x = [[5.,6.,7.,8.]]; where; print w"
    ));
    assert_eq!(
        o.stdout.matches("stopped before #1 Add").count(),
        2,
        "{}",
        o.stdout
    );
    assert!(
        o.stderr.contains("'set' abandoned the paused run"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("no run is stopped"), "{}", o.stderr);
    // nothing of the abandoned run is left to print
    assert!(o.stderr.contains("no value named 'w'"), "{}", o.stderr);
}

#[test]
fn a_stop_inside_the_loop_body_names_the_body_and_iteration() {
    let Some((m, x)) = model("en_ppstructure_mobile_v2_SLANet") else {
        return;
    };
    let o = cmds(&format!(
        "load {}; set x = pb(\"{}\"); break --node p2o.Tanh.0; run; continue; where; print p2o.Add.159 --stats; print x --stats; delete --all; finish",
        m.display(),
        x.display()
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    assert!(
        out.contains("stopped before #10 Tanh 'p2o.Tanh.0' in the body of 'p2o.Loop.0' (Loop, depth 1, iteration 1) [breakpoint 1]"),
        "{out}"
    );
    assert!(
        out.contains("(Loop, depth 1, iteration 2) [breakpoint 1]"),
        "{out}"
    );
    // the body's value and the main graph's input are both alive
    assert!(
        out.contains("p2o.Add.159  float      (1, 64, 256)"),
        "{out}"
    );
    assert!(out.contains("x     float      (1, 3, 256, 256)"), "{out}");
    assert!(out.contains("softmax_1.tmp_0\" =\n"), "{out}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_run_like_a_breakpoint_and_continue_resumes() {
    use rexpect::reader::Options;
    use std::time::Duration;
    // a chain of 300 MatMuls of 512x512 floats: long enough to interrupt
    let mut text = String::from(
        "parse <ir_version: 10, opset_import: [\"\" : 18]> chain (float[512,512] a) => (float[512,512] y) {",
    );
    text.push_str(" v0 = Identity(a)");
    for i in 1..300 {
        text.push_str(&format!(" v{i} = MatMul(v{}, a)", i - 1));
    }
    text.push_str(" y = Identity(v299) }");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_onnx-light"));
    cmd.env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .env(
            "ONNX_LIGHT_HISTORY",
            std::env::temp_dir().join(format!("onnx_light_dbg_hist_{}", std::process::id())),
        )
        .arg("--no-color");
    let opts = Options::new()
        .timeout_ms(Some(60_000))
        .strip_ansi_escape_codes(true);
    let mut p = rexpect::spawn_with_options(cmd, opts).expect("start onnx-light in a pty");
    p.exp_string("onnx> ").unwrap();
    let enter = |p: &mut rexpect::session::PtySession, t: &str| {
        p.send(t).unwrap();
        p.send("\r").unwrap();
        p.flush().unwrap();
    };
    enter(&mut p, &text);
    p.exp_string("parsed graph 'chain'").unwrap();
    enter(&mut p, "config threads 1");
    enter(&mut p, "run a=rand(512,512)");
    p.exp_regex(r"rand\(512,512\)[^\n]*\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.send_control('c').unwrap();
    p.exp_string("[Ctrl-C]").expect("Ctrl-C stops the run");
    p.exp_string("onnx> ").unwrap();
    enter(&mut p, "print a --stats");
    p.exp_regex(r"a\s+float\s+\(512, 512\)")
        .expect("values stay");
    enter(&mut p, "continue");
    p.exp_string("y =").expect("the run completes");
    enter(&mut p, "quit");
    p.exp_eof().unwrap();
}
