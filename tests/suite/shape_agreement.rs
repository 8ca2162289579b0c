//! Inference agrees with the runtime: for every backend case the runtime
//! supports, each value a node produced has the shape inference predicted
//! (resolved with the symbols bound from the inputs) — `check` says OK or
//! UNKNOWN, never MISMATCH. Also reports the share of values with a
//! complete inferred shape.

use crate::common;

use onnx_light::runtime::conformance::{collect_cases, load_case};
use onnx_light::runtime::{EventAction, EventKind, Plan, RunOptions};
use onnx_light::shape::{self, CheckStatus, TypeInfo};
use std::path::PathBuf;

fn suite_dir() -> PathBuf {
    match std::env::var_os("ONNX_BACKEND_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/onnx-backend/node"),
    }
}

#[test]
fn inferred_shapes_agree_with_runtime_shapes() {
    let dir = suite_dir();
    if !dir.is_dir() {
        common::data_missing(&format!("no backend suite at {}", dir.display()));
        return;
    }
    let cases = collect_cases(&[dir]).expect("the suite has cases");
    let (mut ok, mut unknown, mut ran) = (0usize, 0usize, 0usize);
    let mut mismatches = Vec::new();
    for case in &cases {
        let Ok((mut model, sets)) = load_case(case) else {
            continue;
        };
        let Ok(plan) = Plan::new(&model) else {
            continue;
        };
        let report = shape::infer_model(&mut model);
        let graph = model.graph.as_ref().expect("a graph");
        let Some(set) = sets.into_iter().next() else {
            continue;
        };
        let given: Vec<shape::GivenInput> = graph
            .input
            .iter()
            .map(|i| {
                let shape = set
                    .inputs
                    .get(i.name())
                    .and_then(|v| v.as_tensor())
                    .map(|t| t.shape().to_vec());
                (
                    i.name().to_string(),
                    i.r#type.as_ref().map(TypeInfo::from_proto),
                    shape,
                )
            })
            .collect();
        let Ok(bindings) = shape::bind_symbols(&given, &Default::default()) else {
            continue;
        };
        let opts = RunOptions {
            events: true,
            release: false,
            max_values: 0,
            ..Default::default()
        };
        let Ok(res) = plan.run(set.inputs, &opts) else {
            continue;
        };
        ran += 1;
        let produced: Vec<(String, Vec<usize>)> = res
            .events
            .iter()
            .filter(|e| {
                e.depth == 0
                    && matches!(e.action, EventAction::Add | EventAction::Replace)
                    && matches!(e.kind, EventKind::Intermediate | EventKind::Output)
                    && e.data_type != 0
            })
            .filter(|e| {
                // tensors only: sequences and optionals have no shape to check
                res.held
                    .get(&e.name)
                    .is_some_and(|v| v.as_tensor().is_some())
            })
            .map(|e| (e.name.clone(), e.shape.clone()))
            .collect();
        for row in shape::check_shapes(&report, &bindings, &produced) {
            match row.status {
                CheckStatus::Ok => ok += 1,
                CheckStatus::Unknown => {
                    unknown += 1;
                    if std::env::var_os("SHOW_UNKNOWN").is_some() {
                        let op = graph
                            .node
                            .iter()
                            .find(|n| n.output.contains(&row.name))
                            .map(|n| n.op_type().to_string())
                            .unwrap_or_default();
                        eprintln!(
                            "unknown {op} {}: '{}'",
                            case.file_name().unwrap_or_default().to_string_lossy(),
                            row.name
                        );
                    }
                }
                CheckStatus::Mismatch => mismatches.push(format!(
                    "{}: '{}' runtime {:?}, inferred {}, resolved {:?}",
                    case.file_name().unwrap_or_default().to_string_lossy(),
                    row.name,
                    row.runtime,
                    row.inferred
                        .as_deref()
                        .map(shape::format_dims)
                        .unwrap_or_else(|| "?".into()),
                    row.resolved
                )),
            }
        }
    }
    eprintln!(
        "shape agreement over {ran} cases: {ok} OK, {unknown} UNKNOWN, {} MISMATCH",
        mismatches.len()
    );
    for m in &mismatches {
        eprintln!("  {m}");
    }
    assert!(ran > 0, "no case ran");
    assert!(mismatches.is_empty(), "{} mismatches", mismatches.len());
}
