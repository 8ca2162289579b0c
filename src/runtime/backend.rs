//! The ONNX backend test format (SPEC §7): a folder with `model.onnx` and
//! `test_data_set_*/input_*.pb` / `output_*.pb`. Runs cases and compares
//! outputs (floats with rtol 1e-3 / atol 1e-7, other types exactly).

use super::plan::{Plan, RunOptions};
use crate::proto::{self, type_proto::Value as TV, TypeProto};
use crate::tensor::{value_from_pb_bytes, PbKind, Tensor, Value};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

/// The outcome of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub reason: String,
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
        _ => PbKind::Tensor,
    }
}

/// Runs one case folder.
pub fn run_case(dir: &Path) -> CaseResult {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match run_case_inner(dir) {
        Ok(()) => CaseResult {
            name,
            passed: true,
            reason: String::new(),
        },
        Err(reason) => CaseResult {
            name,
            passed: false,
            reason,
        },
    }
}

fn run_case_inner(dir: &Path) -> Result<(), String> {
    let model = proto::load_model(&dir.join("model.onnx")).map_err(|e| e.message)?;
    let graph = model.graph.as_ref().ok_or("the model has no graph")?;
    let plan = Plan::new(&model).map_err(|e| e.0)?;
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
    for set in sets {
        let mut feed = HashMap::new();
        for (i, vi) in inputs.iter().enumerate() {
            let f = set.join(format!("input_{i}.pb"));
            if !f.exists() {
                continue; // an omitted optional input
            }
            let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            let v = value_from_pb_bytes(&bytes, kind_of(vi.r#type.as_ref()))
                .map_err(|e| format!("{}: {e}", f.display()))?;
            feed.insert(vi.name().to_string(), v);
        }
        let opts = RunOptions {
            events: false,
            release: true,
            max_values: 0,
        };
        let res = plan.run(feed, &opts).map_err(|e| e.0)?;
        for (j, vo) in graph.output.iter().enumerate() {
            let f = set.join(format!("output_{j}.pb"));
            if !f.exists() {
                continue;
            }
            let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            let want = value_from_pb_bytes(&bytes, kind_of(vo.r#type.as_ref()))
                .map_err(|e| format!("{}: {e}", f.display()))?;
            let got = &res.outputs[j].1;
            compare_values(got, &want).map_err(|e| format!("output '{}': {e}", vo.name()))?;
        }
    }
    Ok(())
}

/// Compares a produced value with the expected one.
pub fn compare_values(got: &Value, want: &Value) -> Result<(), String> {
    match (got, want) {
        (Value::Tensor(g), Value::Tensor(w)) => compare_tensors(g, w),
        (Value::Sequence { items: g, .. }, Value::Sequence { items: w, .. }) => {
            if g.len() != w.len() {
                return Err(format!(
                    "sequence of {} tensors, expected {}",
                    g.len(),
                    w.len()
                ));
            }
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                compare_tensors(a, b).map_err(|e| format!("item {i}: {e}"))?;
            }
            Ok(())
        }
        (Value::Optional(g), Value::Optional(w)) => match (g, w) {
            (None, None) => Ok(()),
            (Some(a), Some(b)) => compare_values(a, b),
            _ => Err(format!(
                "got {}, expected {}",
                got.describe(),
                want.describe()
            )),
        },
        (Value::Optional(Some(a)), b) | (b, Value::Optional(Some(a))) => compare_values(a, b),
        _ => Err(format!(
            "got {}, expected {}",
            got.describe(),
            want.describe()
        )),
    }
}

/// Compares tensors: type, shape, then values.
pub fn compare_tensors(g: &Tensor, w: &Tensor) -> Result<(), String> {
    if g.dtype() != w.dtype() {
        return Err(format!("type {}, expected {}", g.dtype(), w.dtype()));
    }
    if g.shape() != w.shape() {
        return Err(format!("shape {:?}, expected {:?}", g.shape(), w.shape()));
    }
    if let (Tensor::Str(a), Tensor::Str(b)) = (g, w) {
        if let Some((i, (x, y))) = a
            .iter()
            .zip(b.iter())
            .enumerate()
            .find(|(_, (x, y))| x != y)
        {
            return Err(format!("element {i} is {x:?}, expected {y:?}"));
        }
        return Ok(());
    }
    let is_float = g.dtype().is_float();
    if !is_float {
        if let (Ok(a), Ok(b)) = (g.to_i64_vec(), w.to_i64_vec()) {
            if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                return Err(format!("element {i} is {}, expected {}", a[i], b[i]));
            }
            return Ok(());
        }
    }
    let a = g.to_f64_vec().unwrap_or_default();
    let b = w.to_f64_vec().unwrap_or_default();
    for i in 0..a.len() {
        let (x, y) = (a[i], b[i]);
        let ok = if x.is_nan() || y.is_nan() {
            x.is_nan() && y.is_nan()
        } else if x.is_infinite() || y.is_infinite() {
            x == y
        } else if is_float {
            (x - y).abs() <= ATOL + RTOL * y.abs()
        } else {
            x == y
        };
        if !ok {
            return Err(format!("element {i} is {x}, expected {y}"));
        }
    }
    Ok(())
}
