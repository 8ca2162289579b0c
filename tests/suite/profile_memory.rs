//! `profile` and `memory`: time per operator type / node and live bytes per
//! node of the last run, read off its event log.

use crate::common;

use common::{cmds, SEED};

#[test]
fn profile_shares_add_up_and_json_has_the_fields() {
    let o = cmds(&format!(
        "{SEED}; run x=rand(64,4); profile --format json; profile --nodes --format csv; profile"
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    let start = out.find("[\n").expect("json");
    let end = out[start..].find("\n]").expect("json end") + start + 2;
    let rows: serde_json::Value = serde_json::from_str(&out[start..end]).unwrap();
    let rows = rows.as_array().unwrap();
    let ops: Vec<&str> = rows
        .iter()
        .map(|r| r["op_type"].as_str().unwrap())
        .collect();
    let mut sorted = ops.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["Add", "Mul", "Reshape"]);
    let share: f64 = rows.iter().map(|r| r["share"].as_f64().unwrap()).sum();
    assert!(share == 0.0 || (share - 1.0).abs() < 1e-9, "{share}");
    assert!(rows
        .iter()
        .all(|r| r["count"] == 1 && r["total_us"].is_u64()));
    // per node: one CSV row per node, named and numbered
    assert!(out.contains("node,op_type,name,total_us,share"), "{out}");
    assert!(out.contains("#0,Mul,"), "{out}");
    assert!(out.contains("µs in 3 nodes"), "{out}");
}

#[test]
fn memory_peaks_lower_with_release_and_draws_the_chart() {
    let dir = std::env::temp_dir().join(format!("onnx-light-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("mem.svg");
    let peak = |release: &str| -> u64 {
        let o = cmds(&format!(
            "{SEED}; run x=rand(1000,4) {release}; memory --format json"
        ));
        assert_eq!(o.code, 0, "{}", o.stderr);
        let j = &o.stdout[o.stdout.rfind("{\n  \"peak_bytes\"").expect("json")..];
        let v: serde_json::Value = serde_json::from_str(j.trim()).unwrap();
        assert_eq!(v["series"].as_array().unwrap().len(), 3);
        v["peak_bytes"].as_u64().unwrap()
    };
    let kept = peak("--no-release");
    let released = peak("--release");
    // x, z, w and y are 16,000 bytes each; the two initializers 4 + 16
    assert_eq!(kept, 4 * 16_000 + 20);
    assert!(released < kept, "{released} !< {kept}");
    let o = cmds(&format!(
        "{SEED}; run x=rand(8,4); memory --svg {}",
        svg.display()
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("← peak"), "{}", o.stdout);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("peak "), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_an_event_log_they_say_how_to_get_one() {
    let o = cmds(&format!(
        "{SEED}; config events off; run x=rand(2,4); profile"
    ));
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("config events on"), "{}", o.stderr);
    let o = cmds(&format!("{SEED}; memory"));
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("no run yet"), "{}", o.stderr);
}
