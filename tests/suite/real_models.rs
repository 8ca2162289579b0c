//! Every real model of `../shared/models` (README there), through the
//! shell as a user takes it: `load`, `infer`, `run` on the test inputs,
//! outputs compared with onnxruntime's, `check`, and a binary -> text ->
//! binary round trip. Inference must complete at least as many node
//! outputs as `onnx.shape_inference` (data_prop) and onnxruntime's
//! SymbolicShapeInference did on the same file (their counts are recorded
//! in `tests/real_models_peers.tsv` by `scripts/shape_coverage.py --real
//! --record`).
//!
//! The models are large: when `../shared/models` is absent the test says
//! so on stderr and passes, unless `ONNX_LIGHT_REQUIRE_DATA=1` (set by
//! `.ci/run`), where a missing model is a failure.

use crate::common;

use onnx_light::proto::raw_to_typed;
use onnx_light::proto::{self, GraphProto, ModelProto, TensorProto};
use onnx_light::repl::lex::quote_name;
use onnx_light::repl::Session;
use onnx_light::runtime::conformance::load_case;
use onnx_light::runtime::tolerance::{compare_values, Tolerance};
use onnx_light::tensor::Value;
use onnx_light::text;
use prost::Message;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn models_dir() -> PathBuf {
    common::models_dir()
}

/// The model folders, or `None` (said loudly) when the corpus is absent.
fn model_dirs() -> Option<Vec<PathBuf>> {
    let dir = models_dir();
    let found: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => {
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join("model.onnx").is_file())
                .collect();
            v.sort();
            v
        }
        Err(_) => Vec::new(),
    };
    if found.is_empty() {
        common::data_missing(&format!("no real models under {}", dir.display()));
        return None;
    }
    Some(found)
}

fn exec(s: &mut Session, line: &str) -> String {
    match s.execute(line) {
        Ok((out, _)) => out,
        Err(e) => panic!("`{}`: {e:#}", line.chars().take(200).collect::<String>()),
    }
}

fn name_of(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// Floats within rtol 1e-3 and an absolute tolerance of 1e-5 times the
/// largest expected magnitude of that output: float32 summation in another
/// order leaves errors of that size on values near zero after a hundred
/// layers (layout_cdla: 8e-6 on outputs up to 6).
fn tolerance_for(want: &Value) -> Tolerance {
    let scale = match want {
        Value::Tensor(t) => t
            .to_f64_vec()
            .unwrap_or_default()
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |m, v| m.max(v.abs())),
        _ => 0.0,
    };
    Tolerance {
        rtol: 1e-3,
        atol: (1e-5 * scale).max(1e-7),
    }
}

/// The peers' complete-shape counts: model -> (values, onnx, ort).
fn peers() -> HashMap<String, (usize, usize, usize)> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_models_peers.tsv"),
    )
    .expect("tests/real_models_peers.tsv exists");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| f[i].trim().parse::<usize>().expect("a count");
            (f[0].to_string(), (n(1), n(2), n(3)))
        })
        .collect()
}

#[test]
fn every_real_model_loads_infers_runs_and_checks_in_the_shell() {
    let Some(dirs) = model_dirs() else { return };
    let peers = peers();
    let mut report = Vec::new();
    for dir in &dirs {
        let name = name_of(dir);
        let (model, sets) = load_case(dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let graph = model.graph.as_ref().expect("a graph");
        let inits: std::collections::HashSet<&str> =
            graph.initializer.iter().map(|t| t.name()).collect();
        let mut s = Session::new();
        exec(&mut s, "config events off");
        exec(
            &mut s,
            &format!("load {}", dir.join("model.onnx").display()),
        );
        exec(&mut s, "infer");

        // inference completes at least what the peers complete
        let r = s.report.as_ref().expect("infer leaves a report");
        let top: HashMap<&str, bool> = r
            .values
            .iter()
            .filter(|v| v.scope.is_empty())
            .map(|v| (v.name.as_str(), v.ty.is_complete()))
            .collect();
        let outputs: Vec<&str> = graph
            .node
            .iter()
            .flat_map(|n| n.output.iter().map(|o| o.as_str()))
            .filter(|o| !o.is_empty())
            .collect();
        let ours = outputs
            .iter()
            .filter(|o| top.get(*o) == Some(&true))
            .count();
        let (n, onnx, ort) = *peers
            .get(&name)
            .unwrap_or_else(|| panic!("{name}: not in tests/real_models_peers.tsv"));
        assert_eq!(n, outputs.len(), "{name}: node outputs");
        assert!(
            ours >= onnx.max(ort),
            "{name}: {ours} of {n} complete, onnx {onnx}, onnxruntime {ort}"
        );

        // run on the test inputs, in the shell, and compare
        let set = &sets[0];
        let inputs: Vec<String> = graph
            .input
            .iter()
            .filter(|i| !inits.contains(i.name()))
            .enumerate()
            .map(|(k, i)| {
                let f = dir.join(format!("test_data_set_0/input_{k}.pb"));
                format!("{}=pb(\"{}\")", quote_name(i.name()), f.display())
            })
            .collect();
        exec(&mut s, &format!("run {}", inputs.join(" ")));
        let res = s.last_run.as_ref().expect("a run");
        for (j, want) in set.outputs.iter().enumerate() {
            let Some(want) = want else { continue };
            let (oname, got) = &res.outputs[j];
            compare_values(got, want, &tolerance_for(want))
                .unwrap_or_else(|e| panic!("{name}: output '{oname}': {e}"));
        }

        // check: every value's runtime shape agrees with inference
        let check: serde_json::Value =
            serde_json::from_str(&exec(&mut s, "check --format json")).expect("check JSON");
        let rows = check.as_array().expect("rows");
        let bad: Vec<&serde_json::Value> = rows.iter().filter(|r| r["status"] != "OK").collect();
        assert!(
            bad.is_empty(),
            "{name}: {} of {} values not OK, e.g. {:?}",
            bad.len(),
            rows.len(),
            &bad[..bad.len().min(3)]
        );
        report.push(format!(
            "{name}: {ours} of {n} complete (onnx {onnx}, onnxruntime {ort}); {} values OK",
            rows.len()
        ));
    }
    eprintln!("{}", report.join("\n"));
}

/// What the text syntax cannot hold, removed from a model: doc strings,
/// and `raw_data` (written as typed values instead).
fn normalize(m: &mut ModelProto) {
    fn tensor(t: &mut TensorProto) {
        if t.raw_data.is_some() {
            *t = raw_to_typed(t).expect("raw data of the right size");
        }
        t.doc_string = None;
    }
    fn graph(g: &mut GraphProto) {
        g.doc_string = None;
        for t in &mut g.initializer {
            tensor(t);
        }
        for v in g
            .input
            .iter_mut()
            .chain(&mut g.output)
            .chain(&mut g.value_info)
        {
            v.doc_string = None;
        }
        for n in &mut g.node {
            n.doc_string = None;
            n.domain.get_or_insert_with(String::new);
            for a in &mut n.attribute {
                a.doc_string = None;
                if let Some(t) = &mut a.t {
                    tensor(t);
                    t.name.get_or_insert_with(String::new);
                }
                for t in &mut a.tensors {
                    tensor(t);
                    t.name.get_or_insert_with(String::new);
                }
                if let Some(g) = &mut a.g {
                    graph(g);
                }
                for g in &mut a.graphs {
                    graph(g);
                }
            }
        }
    }
    m.doc_string = None;
    if let Some(g) = &mut m.graph {
        graph(g);
    }
}

#[test]
fn every_real_model_survives_binary_text_binary() {
    let Some(dirs) = model_dirs() else { return };
    let mut report = Vec::new();
    for dir in &dirs {
        let name = name_of(dir);
        let mut m = proto::load_model(&dir.join("model.onnx")).expect("loads");
        normalize(&mut m);
        if let Err(why) = text::expressible(&m) {
            panic!("{name}: the text syntax cannot hold {why}");
        }
        let printed = text::print_model(&m);
        let back = text::parse_model(&printed).unwrap_or_else(|e| panic!("{name}: {e}"));
        // and through the binary encoding again
        let bytes = proto::encode_model(&back);
        let again = proto::decode_model(&bytes).expect("decodes");
        assert!(
            again == m || again.encode_to_vec() == m.encode_to_vec(),
            "{name}: the model differs after binary -> text -> binary"
        );
        let g = m.graph.as_ref().unwrap();
        report.push(format!(
            "{name}: {} nodes, {} initializers, {} value_info, {} KB of text: identical",
            g.node.len(),
            g.initializer.len(),
            g.value_info.len(),
            printed.len() / 1024
        ));
    }
    eprintln!("{}", report.join("\n"));
}
