//! The conformance runner for the ONNX backend test format (SPEC §7): a
//! folder with `model.onnx` and `test_data_set_*/input_*.pb` /
//! `output_*.pb`. Runs cases and compares outputs (floats within a
//! [`Tolerance`], by default rtol 1e-3 / atol 1e-7; other types exactly).

use super::plan::{Plan, RunOptions};
use super::tolerance::{compare_values, Tolerance};
use crate::proto::{self, type_proto::Value as TV, TypeProto};
use crate::proto::{value_from_pb_bytes, PbKind};
use crate::tensor::Value;
use crate::tensor::ValueMap;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The outcome of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub passed: bool,
    /// Not compared: the expected values are random draws (see
    /// [`super::random_draws`]); what could be checked was, and held.
    pub skipped: bool,
    /// Why it failed or was skipped (empty when it passed).
    pub reason: String,
}

/// How a case ended, before it becomes a [`CaseResult`].
enum Outcome {
    Passed,
    Skipped(String),
}

/// The case folders under the given paths (a case folder itself, or a
/// folder of case folders), sorted by name.
pub fn collect_cases(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.join("model.onnx").is_file() {
            out.push(p.clone());
            continue;
        }
        let rd = std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mut found: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| d.join("model.onnx").is_file())
            .collect();
        if found.is_empty() {
            return Err(format!(
                "{}: no model.onnx in it or in its subfolders",
                p.display()
            ));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

fn kind_of(t: Option<&TypeProto>) -> PbKind {
    match t.and_then(|t| t.value.as_ref()) {
        Some(TV::SequenceType(_)) => PbKind::Sequence,
        Some(TV::OptionalType(_)) => PbKind::Optional,
        Some(TV::MapType(_)) => PbKind::Map,
        _ => PbKind::Tensor,
    }
}

/// Runs one case folder.
pub fn run_case(dir: &Path, tol: &Tolerance) -> CaseResult {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // a case that panics (a bug) fails alone; the run goes on
    let result = std::panic::catch_unwind(|| run_case_inner(dir, tol)).unwrap_or_else(|p| {
        let what = super::limits::panic_message(p.as_ref());
        Err(format!("internal error: {what} (a bug in onnx-light)"))
    });
    match result {
        Ok(Outcome::Passed) => CaseResult {
            name,
            passed: true,
            skipped: false,
            reason: String::new(),
        },
        Ok(Outcome::Skipped(reason)) => CaseResult {
            name,
            passed: false,
            skipped: true,
            reason,
        },
        Err(reason) => CaseResult {
            name,
            passed: false,
            skipped: false,
            reason,
        },
    }
}

/// One test data set: the inputs by name, and the expected outputs (in
/// graph output order; `None` where the file is absent).
pub struct DataSet {
    pub inputs: ValueMap,
    pub outputs: Vec<Option<Value>>,
}

fn read_pb(f: &Path, ty: Option<&TypeProto>) -> Result<Value, String> {
    let bytes = crate::files::read_regular(f).map_err(|e| format!("{}: {e}", f.display()))?;
    value_from_pb_bytes(&bytes, kind_of(ty)).map_err(|e| format!("{}: {e}", f.display()))
}

/// Loads a case: its model and its data sets. Inputs are matched in order
/// to the graph inputs that are not initializers.
pub fn load_case(dir: &Path) -> Result<(proto::ModelProto, Vec<DataSet>), String> {
    let model = proto::load_model(&dir.join("model.onnx")).map_err(|e| e.message)?;
    let graph = model.graph.as_ref().ok_or("the model has no graph")?;
    let inits: std::collections::HashSet<&str> =
        graph.initializer.iter().map(|t| t.name()).collect();
    let inputs: Vec<_> = graph
        .input
        .iter()
        .filter(|i| !inits.contains(i.name()))
        .collect();
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
        })
        .collect();
    sets.sort();
    if sets.is_empty() {
        return Err("no test_data_set_* folder".into());
    }
    let mut out = Vec::with_capacity(sets.len());
    for set in sets {
        let mut feed = ValueMap::default();
        for (i, vi) in inputs.iter().enumerate() {
            let f = set.join(format!("input_{i}.pb"));
            if f.exists() {
                feed.insert(vi.name().to_string(), read_pb(&f, vi.r#type.as_ref())?);
            }
        }
        let mut expected = Vec::new();
        for (j, vo) in graph.output.iter().enumerate() {
            let f = set.join(format!("output_{j}.pb"));
            expected.push(if f.exists() {
                Some(read_pb(&f, vo.r#type.as_ref())?)
            } else {
                None
            });
        }
        out.push(DataSet {
            inputs: feed,
            outputs: expected,
        });
    }
    Ok((model, out))
}

fn run_case_inner(dir: &Path, tol: &Tolerance) -> Result<Outcome, String> {
    let (model, sets) = load_case(dir)?;
    let graph = model.graph.as_ref().ok_or("the model has no graph")?;
    let plan = Plan::new(&model).map_err(|e| e.to_string())?;
    let random = !super::random_draws::random_nodes(graph).is_empty();
    let mut skipped = Vec::new();
    for set in sets {
        let opts = RunOptions {
            events: false,
            release: true,
            max_values: 0,
            hold_outputs: false,
            ..Default::default()
        };
        // a random case keeps its inputs for the checks of its draws
        let feed = if random {
            set.inputs.clone()
        } else {
            ValueMap::default()
        };
        let res = plan.run(set.inputs, &opts).map_err(|e| e.to_string())?;
        let mut failures = Vec::new();
        for (j, (vo, want)) in graph.output.iter().zip(&set.outputs).enumerate() {
            let Some(want) = want else { continue };
            let got = &res.outputs[j].1;
            if let Err(e) = compare_values(got, want, tol) {
                failures.push(format!("output '{}': {e}", vo.name()));
            }
        }
        if !failures.is_empty() {
            if !random {
                return Err(failures.join("; "));
            }
            match super::random_draws::check(graph, &feed, &res.outputs, &set.outputs, tol) {
                Ok(what) => skipped.push(what),
                Err(e) => return Err(format!("{e} (values: {})", failures.join("; "))),
            }
        }
    }
    if skipped.is_empty() {
        Ok(Outcome::Passed)
    } else {
        Ok(Outcome::Skipped(format!(
            "{}; checked: {}",
            super::random_draws::SKIP_REASON,
            skipped.join("; ")
        )))
    }
}
