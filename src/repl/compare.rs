//! `compare REF [NAME=TENSOR ...] [--rtol R] [--atol A] [--all]`: run this
//! model and REF (another model file, or a dump folder) on the same inputs
//! and report the first node whose outputs differ (matching and
//! differences: [`crate::runtime::compare`]).

use super::commands::{
    bind_from_inputs, emit, feed, looks_like_text, plan, set_input, with_pool, Args, R,
};
use super::dump::tensor_of;
use super::lex::{quote_name, unquote_name};
use super::render::{Data, Format, Row};
use super::tensor_expr;
use super::{Flow, Session};
use crate::graph::NodeLabel;
use crate::proto::{self, ModelProto};
use crate::runtime::compare::{diff, match_values, Diff, ValueMeta};
use crate::runtime::dump::{read_entry, read_manifest, ManifestEntry};
use crate::runtime::tolerance::{ATOL, RTOL};
use crate::runtime::{Plan, PlannedNode, RunOptions};
use crate::tensor::ValueMap;
use crate::tensor::{DataType, Tensor};
use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where the reference values come from.
enum Reference {
    Run(ValueMap),
    Dump(PathBuf, Vec<ManifestEntry>),
}

fn tolerance(a: &Args, flag: &str, default: f64) -> R<f64> {
    match a.value(flag) {
        None => Ok(default),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| anyhow!("--{flag} expects a non-negative number, got '{v}'")),
    }
}

/// A model file, binary or ONNX text (as `load` reads it).
fn load_reference(path: &Path) -> R<ModelProto> {
    let shown = path.display();
    let is_binary = path.extension().is_some_and(|e| e == "onnx")
        || !looks_like_text(path).with_context(|| shown.to_string())?;
    if is_binary {
        return Ok(proto::load_model(path)?);
    }
    let text = crate::files::read_text(path).with_context(|| shown.to_string())?;
    let mut model = crate::text::parse_model(&text).with_context(|| shown.to_string())?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    proto::resolve_external_data(&mut model, dir)
        .map_err(anyhow::Error::msg)
        .with_context(|| shown.to_string())?;
    Ok(model)
}

/// The tensors a run produced, node by node in execution order, with the
/// position of their node in `nodes`.
fn produced(nodes: &[PlannedNode], held: &ValueMap) -> Vec<(ValueMeta, usize)> {
    let mut out = Vec::new();
    for (pos, n) in nodes.iter().enumerate() {
        for o in n.outputs.iter().flatten() {
            if let Some(t) = held.get(o).and_then(tensor_of) {
                out.push((ValueMeta::of(o, t), pos));
            }
        }
    }
    out
}

fn node_text(n: &PlannedNode) -> String {
    NodeLabel::new(n.index, &n.op_type, &n.name).to_string()
}

/// A number for JSON (infinity has no JSON form: null).
fn finite_or_null<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

/// The node that writes a compared value.
#[derive(Clone, Default, Serialize)]
struct NodeRef {
    index: usize,
    op_type: String,
    domain: String,
    name: String,
}

/// One compared value: a row of `compare --all` (and of its CSV).
#[derive(Default, Serialize)]
struct CompareLine {
    name: String,
    #[serde(rename = "ref")]
    reference: String,
    node: NodeRef,
    #[serde(serialize_with = "finite_or_null")]
    max_abs: f64,
    #[serde(serialize_with = "finite_or_null")]
    max_rel: f64,
    ok: bool,
    /// Why the values could not be compared element by element.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

impl CompareLine {
    fn new(m: &Matched, name: &str, n: &PlannedNode) -> CompareLine {
        CompareLine {
            name: name.to_string(),
            reference: m.reference.clone(),
            node: NodeRef {
                index: n.index,
                op_type: n.op_type.clone(),
                domain: n.domain.clone(),
                name: n.name.clone(),
            },
            max_abs: m.diff.max_abs,
            max_rel: m.diff.max_rel,
            ok: m.diff.ok,
            problem: m.problem.clone(),
        }
    }
}

impl Row for CompareLine {
    const COLUMNS: &'static [&'static str] = &[
        "name", "ref", "node", "op_type", "max_abs", "max_rel", "status",
    ];

    fn cell(&self, field: &str) -> Option<String> {
        Some(match field {
            "node" => self.node.index.to_string(),
            "op_type" => self.node.op_type.clone(),
            "max_abs" => format!("{:.3e}", self.max_abs),
            "max_rel" => format!("{:.3e}", self.max_rel),
            "status" => if self.ok { "OK" } else { "DIFF" }.to_string(),
            _ => return None,
        })
    }
}

/// The first value that differs, as the JSON names it.
#[derive(Serialize)]
struct FirstDivergence {
    node: NodeRef,
    value: String,
    ref_value: String,
    #[serde(serialize_with = "finite_or_null")]
    max_abs: f64,
    #[serde(serialize_with = "finite_or_null")]
    max_rel: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

impl FirstDivergence {
    fn new(l: &CompareLine) -> FirstDivergence {
        FirstDivergence {
            node: l.node.clone(),
            value: l.name.clone(),
            ref_value: l.reference.clone(),
            max_abs: l.max_abs,
            max_rel: l.max_rel,
            problem: l.problem.clone(),
        }
    }
}

/// The JSON document of `compare` (`values` filled with --all).
#[derive(Serialize)]
struct CompareDoc {
    first_divergence: Option<FirstDivergence>,
    matched: usize,
    unmatched: usize,
    rtol: f64,
    atol: f64,
    values: Vec<CompareLine>,
}

/// One value of this model matched with one of the reference.
struct Matched {
    cur: usize,
    reference: String,
    diff: Diff,
    /// Why the values could not be compared element by element.
    problem: Option<String>,
}

pub(super) fn cmd_compare(s: &mut Session, a: &Args) -> R<Flow> {
    let text = a.rest.trim();
    let first = a
        .pos
        .first()
        .ok_or_else(|| super::commands::usage_error("compare", "missing REF"))?;
    let assigns = text.get(first.len()..).unwrap_or("");
    let ref_path = crate::files::expand_home(&unquote_name(first).map_err(anyhow::Error::msg)?);
    let rtol = tolerance(a, "rtol", RTOL)?;
    let atol = tolerance(a, "atol", ATOL)?;
    s.model()?;
    let ref_dir = Path::new(&ref_path);
    if !ref_dir.exists() {
        bail!("{ref_path}: no such file or folder (REF is a model file or a dump folder)");
    }
    for (name, expr) in tensor_expr::parse_assignments(assigns).map_err(anyhow::Error::msg)? {
        set_input(s, &name, &expr)?;
    }
    let p = plan(s)?;
    let inputs = feed(s, &p)?;
    bind_from_inputs(s)?;
    let started = Instant::now();
    let opts = RunOptions {
        events: false,
        release: false,
        max_values: 0,
        ..Default::default()
    };

    // the reference first: a bad REF fails before the long run
    let (reference, ref_metas) = if ref_dir.is_dir() {
        let entries = read_manifest(ref_dir).map_err(anyhow::Error::msg)?;
        let mut metas = Vec::new();
        let mut kept = Vec::new();
        for e in entries.into_iter().filter(|e| e.node_index.is_some()) {
            let dtype = DataType::from_name(&e.elem_type).ok_or_else(|| {
                anyhow!(
                    "{ref_path}/manifest.json: value '{}' has the unknown elem_type '{}'",
                    e.name,
                    e.elem_type
                )
            })?;
            metas.push(ValueMeta {
                name: e.name.clone(),
                dtype,
                shape: e.shape.clone(),
            });
            kept.push(e);
        }
        (Reference::Dump(ref_dir.to_path_buf(), kept), metas)
    } else {
        let m = load_reference(ref_dir)?;
        // PlanError and RunError texts already hold their sources': as
        // sources they would show twice, so they are kept as text
        let rp = Plan::new(&m).map_err(|e| anyhow!("{ref_path}: {e}"))?;
        // inputs by name, else by position among the inputs to give
        let mine: Vec<String> = p.required_inputs().iter().map(|d| d.name.clone()).collect();
        let mut rin = HashMap::new();
        for (k, d) in rp.required_inputs().iter().enumerate() {
            let v = inputs
                .get(&d.name)
                .or_else(|| mine.get(k).and_then(|n| inputs.get(n)))
                .ok_or_else(|| {
                    anyhow!(
                        "{ref_path}: its input {} has no counterpart among this model's inputs",
                        quote_name(&d.name)
                    )
                })?;
            rin.insert(d.name.clone(), v.clone());
        }
        for d in rp.inputs() {
            if let (false, Some(v)) = (rin.contains_key(&d.name), inputs.get(&d.name)) {
                rin.insert(d.name.clone(), v.clone());
            }
        }
        let res =
            with_pool(s, || rp.run(rin, &opts)).map_err(|e| anyhow!("{ref_path} failed: {e}"))?;
        let nodes = rp.nodes();
        let metas = produced(&nodes, &res.held)
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        (Reference::Run(res.held), metas)
    };
    let res =
        with_pool(s, || p.run(inputs, &opts)).map_err(|e| anyhow!("this model failed: {e}"))?;
    let nodes = p.nodes();
    let cur = produced(&nodes, &res.held);
    let cur_metas: Vec<ValueMeta> = cur.iter().map(|(m, _)| m.clone()).collect();
    let matches = match_values(&cur_metas, &ref_metas);

    let mut rows: Vec<Matched> = Vec::new();
    for (i, m) in matches.iter().enumerate() {
        let Some(j) = *m else { continue };
        let Some(mine) = res.held.get(&cur_metas[i].name).and_then(tensor_of) else {
            continue;
        };
        let theirs: Result<Tensor, String> = match &reference {
            Reference::Run(held) => held
                .get(&ref_metas[j].name)
                .and_then(tensor_of)
                .cloned()
                .ok_or_else(|| format!("'{}' is not held", ref_metas[j].name)),
            Reference::Dump(dir, entries) => match entries.get(j) {
                Some(e) => read_entry(dir, e),
                None => Err("no manifest entry".into()),
            },
        };
        let (d, problem) = match theirs.and_then(|t| diff(mine, &t, rtol, atol)) {
            Ok(d) => (d, None),
            Err(e) => (
                Diff {
                    max_abs: f64::INFINITY,
                    max_rel: f64::INFINITY,
                    ok: false,
                },
                Some(e),
            ),
        };
        rows.push(Matched {
            cur: i,
            reference: ref_metas[j].name.clone(),
            diff: d,
            problem,
        });
    }
    let elapsed = started.elapsed();
    let unmatched = cur_metas.len() - rows.len();
    let first = rows.iter().find(|r| !r.diff.ok);
    let all = a.has("all");

    let line = |r: &Matched| CompareLine::new(r, &cur_metas[r.cur].name, &nodes[cur[r.cur].1]);
    let doc = CompareDoc {
        first_divergence: first.map(|r| FirstDivergence::new(&line(r))),
        matched: rows.len(),
        unmatched,
        rtol,
        atol,
        values: Vec::new(),
    };
    // the table lists every value with --all; CSV the first divergence
    // without it; the JSON's `values` are all of them with --all
    let listed: Vec<CompareLine> = match (all, a.format) {
        (true, _) => rows.iter().map(line).collect(),
        (false, Format::Csv) => first.into_iter().map(line).collect(),
        (false, _) => Vec::new(),
    };
    let data = Data::from_rows(&listed).in_document(|values| {
        let mut doc = serde_json::to_value(doc).unwrap_or(serde_json::Value::Null);
        if all {
            doc["values"] = values;
        }
        doc
    });
    if a.format == Format::Table {
        let text = match first {
            Some(r) => format!(
                "first divergence: {} writes {} (max abs diff {:.3e}, max rel diff {:.3e}; rtol {rtol}, atol {atol}){}; {} value{} matched",
                node_text(&nodes[cur[r.cur].1]),
                quote_name(&cur_metas[r.cur].name),
                r.diff.max_abs,
                r.diff.max_rel,
                match (&r.problem, r.reference == cur_metas[r.cur].name) {
                    (Some(pr), _) => format!(" [{pr}]"),
                    (None, true) => String::new(),
                    (None, false) => format!(" [REF's {}]", quote_name(&r.reference)),
                },
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            ),
            None => format!(
                "no divergence ({} value{} matched)",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            ),
        };
        s.say(text);
    }
    if a.format != Format::Table || all {
        emit(s, a, data);
    }
    s.status(format!(
        "compared in {:.0} ms: {} value{} matched, {unmatched} of this model's values without a counterpart in {ref_path}",
        elapsed.as_secs_f64() * 1000.0,
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
    ));
    // the run keeps every intermediate: 'print NAME' shows any of them
    s.last_run = Some(res);
    Ok(Flow::Continue)
}
