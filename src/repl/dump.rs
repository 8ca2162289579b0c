//! `dump DIR [--values a,b | --all] [--pb]`: the values of the last run as
//! `.npy` files (and `.pb` TensorProto with `--pb`) with `DIR/manifest.json`.
//!
//! Values still held after the run are written directly. When the last
//! run released some of them (`release on`), the model runs again on that
//! run's inputs with an observer ([`RunOptions::on_value`]) that writes
//! each wanted value as it is produced, before release can free it.

use super::commands::{plan, with_pool, Args, R};
use super::lex::{self, quote_name, unquote_name};
use super::{Flow, Session};
use crate::runtime::dump::DumpWriter;
use crate::runtime::RunOptions;
use crate::tensor::ValueMap;
use crate::tensor::{Tensor, Value};
use anyhow::bail;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The tensor inside a value, if it holds one.
pub(super) fn tensor_of(v: &Value) -> Option<&Tensor> {
    match v {
        Value::Optional(Some(inner)) => inner.as_tensor(),
        other => other.as_tensor(),
    }
}

/// A value of the main graph that dump can write.
struct Candidate {
    name: String,
    /// The node that writes it (`None`: an input or an initializer).
    node: Option<usize>,
}

/// What the observer of a re-run shares with the command.
struct Shared {
    writer: Option<DumpWriter>,
    error: Option<String>,
    skipped: Vec<String>,
}

pub(super) fn cmd_dump(s: &mut Session, a: &Args) -> R<Flow> {
    let dir = super::commands::path_arg(a, 0);
    s.model()?;
    let p = plan(s)?;
    let Some(last) = s.last_run.as_ref() else {
        bail!("no run to dump yet: 'run' first (dump writes the values of the last run)");
    };

    // every value of the main graph, in the order a run writes them
    let mut cands: Vec<Candidate> = Vec::new();
    let mut known: HashSet<String> = HashSet::new();
    for d in p.inputs() {
        if last.held.contains_key(&d.name) && known.insert(d.name.clone()) {
            cands.push(Candidate {
                name: d.name.clone(),
                node: None,
            });
        }
    }
    for (name, _) in p.initializer_values() {
        if known.insert(name.clone()) {
            cands.push(Candidate {
                name: name.clone(),
                node: None,
            });
        }
    }
    for n in p.nodes() {
        for o in n.outputs.iter().flatten() {
            if known.insert(o.clone()) {
                cands.push(Candidate {
                    name: o.clone(),
                    node: Some(n.index),
                });
            }
        }
    }

    let explicit = a.value("values").is_some();
    let wanted: HashSet<String> = if let Some(list) = a.value("values") {
        let mut w = HashSet::new();
        for part in lex::split_top(list, |c| c == ',') {
            let name = unquote_name(part.trim()).map_err(anyhow::Error::msg)?;
            if !known.contains(&name) {
                let declared = p.inputs().iter().any(|d| d.name == name);
                bail!(if declared {
                    format!(
                        "input '{name}' was not given to the last run, so dump has no value for it"
                    )
                } else {
                    format!(
                        "no value named '{name}' in the graph (dump writes the inputs, initializers and node outputs of the main graph; values inside Loop, If and Scan bodies are not dumped)"
                    )
                });
            }
            w.insert(name);
        }
        if w.is_empty() {
            bail!("dump: --values needs at least one name");
        }
        w
    } else if a.has("all") {
        known.clone()
    } else {
        let outputs: HashSet<&str> = p.output_names().iter().map(|s| s.as_str()).collect();
        cands
            .iter()
            .filter(|c| c.node.is_some() || outputs.contains(c.name.as_str()))
            .map(|c| c.name.clone())
            .collect()
    };
    let selected: Vec<&Candidate> = cands.iter().filter(|c| wanted.contains(&c.name)).collect();

    let inits: HashMap<&str, &Value> = p
        .initializer_values()
        .map(|(n, v)| (n.as_str(), v))
        .collect();
    let held = |name: &str| last.held.get(name).or_else(|| inits.get(name).copied());
    // a value the last run did not keep: released, or never reached
    let missing: Vec<&str> = selected
        .iter()
        .filter(|c| held(&c.name).is_none())
        .map(|c| c.name.as_str())
        .collect();
    if explicit {
        if let Some(c) = selected
            .iter()
            .find(|c| held(&c.name).is_some_and(|v| tensor_of(v).is_none()))
        {
            let what = held(&c.name).map(|v| v.describe()).unwrap_or_default();
            bail!("'{}' is {what}: dump writes tensors", c.name);
        }
    }

    let mut w = DumpWriter::new(Path::new(&dir), a.has("pb")).map_err(anyhow::Error::msg)?;
    let mut skipped: Vec<String> = Vec::new();
    let mut rerun = false;
    if missing.is_empty() {
        for c in &selected {
            let Some(v) = held(&c.name) else { continue };
            let Some(t) = tensor_of(v) else {
                skipped.push(c.name.clone());
                continue;
            };
            if let Err(e) = w.write(&c.name, t, c.node) {
                let n = w.abandon();
                bail!("{e}\n  removed the {n} files written; the manifest was not written");
            }
        }
    } else {
        rerun = true;
        let inputs: ValueMap = p
            .inputs()
            .iter()
            .filter_map(|d| last.held.get(&d.name).map(|v| (d.name.clone(), v.clone())))
            .collect();
        let failed_before = last.failed.clone();
        let shared = Arc::new(Mutex::new(Shared {
            writer: Some(w),
            error: None,
            skipped: Vec::new(),
        }));
        let sel: HashSet<String> = selected.iter().map(|c| c.name.clone()).collect();
        let sh = shared.clone();
        let observer = move |name: &str, v: &Value, node: Option<usize>, depth: usize| {
            if depth != 0 || !sel.contains(name) {
                return;
            }
            let Ok(mut st) = sh.lock() else { return };
            if st.error.is_some() {
                return;
            }
            let Some(t) = tensor_of(v) else {
                st.skipped.push(name.to_string());
                return;
            };
            let result = match st.writer.as_mut() {
                Some(w) if !w.has(name) => w.write(name, t, node),
                _ => Ok(()),
            };
            if let Err(e) = result {
                st.error = Some(e);
            }
        };
        let opts = RunOptions {
            events: false,
            release: true,
            max_values: 0,
            on_value: Some(Arc::new(observer)),
            ..Default::default()
        };
        s.status(format!(
            "note: the last run did not keep {} of the values to dump (released with release on, or not reached); running the model again on that run's inputs to write each value as it is produced",
            missing.len()
        ));
        let run = with_pool(s, || p.run(inputs, &opts));
        drop(opts);
        let (writer, error, sk) = match shared.lock() {
            Ok(mut st) => (
                st.writer.take(),
                st.error.take(),
                std::mem::take(&mut st.skipped),
            ),
            Err(_) => (None, Some("the dump writer failed".into()), Vec::new()),
        };
        let Some(writer) = writer else {
            bail!("the dump writer was lost");
        };
        w = writer;
        skipped = sk;
        let problem = match (run, error) {
            (_, Some(e)) => Some(e),
            (Err(e), None) => Some(match failed_before {
                Some(_) => format!("the model failed again: {e}"),
                None => format!("running the model again failed: {e}"),
            }),
            (Ok(_), None) => None,
        };
        if let Some(e) = problem {
            let n = w.abandon();
            bail!("{e}\n  removed the {n} files written; the manifest was not written");
        }
    }
    if explicit && !skipped.is_empty() {
        let n = w.abandon();
        bail!(
            "'{}' is not a tensor: dump writes tensors (removed the {n} files written)",
            skipped[0]
        );
    }
    let count = w.len();
    let bytes = w.bytes();
    let not_written: Vec<String> = selected
        .iter()
        .filter(|c| !w.has(&c.name) && !skipped.contains(&c.name))
        .map(|c| quote_name(&c.name))
        .collect();
    w.finish().map_err(anyhow::Error::msg)?;
    s.status(format!(
        "wrote {count} value{} ({}) to {dir} (manifest.json){}",
        if count == 1 { "" } else { "s" },
        crate::tensor::budget::human(bytes as usize),
        if rerun {
            ", written during a second run"
        } else {
            ""
        }
    ));
    if !skipped.is_empty() {
        s.status(format!(
            "note: {} value{} not written (not tensors: sequences, maps or empty optionals): {}",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
            skipped
                .iter()
                .map(|n| quote_name(n))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !not_written.is_empty() {
        s.status(format!(
            "note: {} value{} not produced by the run: {}",
            not_written.len(),
            if not_written.len() == 1 {
                " was"
            } else {
                "s were"
            },
            not_written.join(", ")
        ));
    }
    Ok(Flow::Continue)
}
