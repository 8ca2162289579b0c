//! The seed walkthrough through the binary: the transcript of
//! `scripts/runtime_events.repl` (snapshot) and the event log's JSON,
//! field by field, as SPEC §5 fixes it.

use crate::common;

use common::{cmds, run, SEED};
use serde_json::Value;

#[test]
fn walkthrough_script_transcript() {
    let o = run(&["--no-color", "scripts/runtime_events.repl"], None);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    // status lines only, on stderr
    assert_eq!(
        o.stderr,
        "parsed graph 'agraph': 3 nodes, 1 input, 1 output\nN = 2\nrelease on\n"
    );
    insta::with_settings!({filters => vec![
        (r#""elapsed_us": \d+"#, r#""elapsed_us": "[us]""#),
        (r"(#\d+ [A-Za-z]+ +)\d+", "$1[us]"),
        (r"(,false,\d+::[A-Za-z]+:[^,]*,)\d+", "$1[us]"),
    ]}, {
        insta::assert_snapshot!("runtime_events_transcript", o.stdout);
    });
}

fn events_json(release: &str) -> Vec<Value> {
    let script = format!(
        "{SEED}\nconfig release {release}\nrun x=arange(8).reshape(2,4)\nevents --format json"
    );
    let o = run(&["--no-color"], Some(&script));
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    // the JSON document is everything after the run's output
    let start = o.stdout.find("\n[\n").expect("a JSON array") + 1;
    let v: Value = serde_json::from_str(&o.stdout[start..]).expect("valid JSON");
    v.as_array().expect("an array").clone()
}

#[test]
fn seed_event_log_with_release() {
    let ev = events_json("on");
    let expect = [
        ("add", "input", "x", 1, vec![2, 4]),
        ("add", "initializer", "two", 1, vec![]),
        ("add", "initializer", "target_shape", 7, vec![2]),
        ("add", "intermediate", "z", 1, vec![2, 4]),
        ("run_node", "node", "", 0, vec![]),
        ("add", "intermediate", "w", 1, vec![2, 4]),
        ("run_node", "node", "", 0, vec![]),
        ("remove", "intermediate", "z", 0, vec![]),
        ("add", "output", "y", 1, vec![4, 2]),
        ("run_node", "node", "", 0, vec![]),
        ("remove", "intermediate", "w", 0, vec![]),
    ];
    assert_eq!(ev.len(), 11);
    for (i, (e, (action, kind, name, dt, shape))) in ev.iter().zip(expect).enumerate() {
        assert_eq!(e["index"], i, "event {i}");
        assert_eq!(e["action"], action, "event {i}");
        assert_eq!(e["kind"], kind, "event {i}");
        assert_eq!(e["name"], name, "event {i}");
        assert_eq!(e["data_type"], dt, "event {i}");
        assert_eq!(e["shape"], serde_json::json!(shape), "event {i}");
        assert_eq!(e["depth"], 0, "event {i}");
        assert_eq!(e["scope"], "", "event {i}");
        assert_eq!(e["truncated"], false, "event {i}");
        let count: usize = shape.iter().product::<usize>();
        let expected_count = if action == "add" { count } else { 0 };
        assert_eq!(e["value_count"], expected_count, "event {i}");
    }
    let ops: Vec<&Value> = ev
        .iter()
        .filter(|e| e["action"] == "run_node")
        .map(|e| &e["node"])
        .collect();
    for (k, (node, op)) in ops.iter().zip(["Mul", "Add", "Reshape"]).enumerate() {
        assert_eq!(node["index"], k);
        assert_eq!(node["op_type"], op);
        assert_eq!(node["domain"], "");
        assert_eq!(node["name"], "");
    }
    assert!(ev
        .iter()
        .filter(|e| e["action"] == "run_node")
        .all(|e| e["elapsed_us"].is_u64()));
    assert_eq!(
        ev[3]["values"],
        serde_json::json!([0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0])
    );
    assert_eq!(
        ev[8]["values"],
        serde_json::json!([0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0])
    );
    assert_eq!(ev[2]["values"], serde_json::json!([-1, 2]));
}

#[test]
fn seed_event_log_without_release() {
    let ev = events_json("off");
    assert_eq!(ev.len(), 9);
    assert!(ev.iter().all(|e| e["action"] != "remove"));
    let names: Vec<&str> = ev
        .iter()
        .map(|e| e["name"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        names,
        ["x", "two", "target_shape", "z", "", "w", "", "y", ""]
    );
}

#[test]
fn max_values_truncates_events() {
    let o = cmds(&format!(
        "{SEED}\nconfig max-values 3\nrun x=arange(8).reshape(2,4)\nevents --name z --format json"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let start = o.stdout.find("\n[\n").expect("a JSON array") + 1;
    let v: Value = serde_json::from_str(&o.stdout[start..]).expect("valid JSON");
    assert_eq!(v[0]["values"], serde_json::json!([0.0, 2.0, 4.0]));
    assert_eq!(v[0]["value_count"], 8);
    assert_eq!(v[0]["truncated"], true);
}

#[test]
fn infer_json_and_equation() {
    let o = cmds(&format!("{SEED}\ninfer --format json"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    // status lines went to stderr: stdout is the JSON document alone
    let v: Value = serde_json::from_str(&o.stdout).expect("stdout is one JSON document");
    assert!(o.stderr.contains("parsed graph 'agraph'"), "{}", o.stderr);
    let eq = &v["equations"][0];
    assert_eq!(eq["symbol"], "M");
    assert_eq!(eq["expr"], "2*N");
    let z = v["values"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == "z"))
        .expect("z is reported");
    assert_eq!(z["elem_type"], "float");
    assert_eq!(z["shape"], serde_json::json!(["N", 4]));
    assert_eq!(z["source"], "inferred");
}

#[test]
fn check_reports_ok_for_every_value() {
    let o = cmds(&format!(
        "{SEED}\ninfer\nrun x=arange(8).reshape(2,4)\ncheck --format json"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let start = o.stdout.rfind("\n[").expect("a JSON array") + 1;
    let v: Value = serde_json::from_str(&o.stdout[start..]).expect("valid JSON");
    let names: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|x| x["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["z", "w", "y"]);
    assert!(v
        .as_array()
        .expect("array")
        .iter()
        .all(|x| x["status"] == "OK"));
    assert_eq!(v[2]["resolved"], serde_json::json!([4, 2]));
}

#[test]
fn eval_json_forms() {
    let o = cmds("let N = 2; eval (N*4)//2 --format json");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("\"value\": 4"), "{}", o.stdout);
    let o = cmds("eval 2*K//K --format json; eval N*2+N");
    assert!(o.stdout.contains("\"value\": 2"), "{}", o.stdout);
    assert!(o.stdout.trim_end().ends_with("3*N"), "{}", o.stdout);
    let o = cmds("eval N+N --format json");
    assert!(o.stdout.contains("\"simplified\": \"2*N\""), "{}", o.stdout);
}
