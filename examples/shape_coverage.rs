//! Shape coverage: for each model, how many node outputs of the main graph
//! get a complete shape from `shape::infer_model` (every dimension an
//! integer or an expression; a fresh symbol for a data-dependent size
//! counts, `?` does not). `graph.value_info` is cleared first (kept with
//! `--keep-value-info`, as a user loading the file sees it); declared
//! graph outputs are kept.
//!
//! `cargo run --release --example shape_coverage -- [--show] [--keep-value-info] [MODEL.onnx | DIR]...`
//! Without paths: every `model.onnx` under `../shared/onnx-backend/node/*/`
//! and `../shared/models/*/`. Prints `model<TAB>values<TAB>complete` per
//! model, then a `TOTAL` line. `--show` also lists the incomplete values.

use onnx_light::proto::load_model;
use onnx_light::shape::{self, TypeInfo};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn models_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let direct = dir.join("model.onnx");
    if direct.is_file() {
        out.push(direct);
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subs: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    subs.sort();
    for s in subs {
        let m = s.join("model.onnx");
        if m.is_file() {
            out.push(m);
        }
    }
}

fn main() {
    let mut show = false;
    let mut keep_value_info = false;
    let mut paths = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--show" {
            show = true;
        } else if a == "--keep-value-info" {
            keep_value_info = true;
        } else {
            let p = PathBuf::from(a);
            if p.is_dir() {
                models_under(&p, &mut paths);
            } else {
                paths.push(p);
            }
        }
    }
    if paths.is_empty() {
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
        models_under(&shared.join("onnx-backend/node"), &mut paths);
        models_under(&shared.join("models"), &mut paths);
    }
    let (mut total, mut complete, mut models) = (0usize, 0usize, 0usize);
    for p in &paths {
        let Ok(mut m) = load_model(p) else {
            eprintln!("skipped (cannot load): {}", p.display());
            continue;
        };
        let Some(g) = m.graph.as_mut() else { continue };
        if !keep_value_info {
            g.value_info.clear();
        }
        // node output name -> op type, in graph order
        let produced: Vec<(String, String)> = g
            .node
            .iter()
            .flat_map(|n| {
                n.output
                    .iter()
                    .filter(|o| !o.is_empty())
                    .map(move |o| (o.clone(), n.op_type().to_string()))
            })
            .collect();
        let report = shape::infer_model(&mut m);
        let top: HashMap<&str, &TypeInfo> = report
            .values
            .iter()
            .filter(|v| v.scope.is_empty())
            .map(|v| (v.name.as_str(), &v.ty))
            .collect();
        let mut n_complete = 0;
        for (name, op) in &produced {
            let ty = top.get(name.as_str());
            if ty.is_some_and(|t| t.is_complete()) {
                n_complete += 1;
                if show && std::env::var_os("SHOW_ALL").is_some() {
                    println!(
                        "  complete {op} '{name}': {}",
                        ty.map(|t| t.display()).unwrap_or_default()
                    );
                }
            } else if show {
                println!(
                    "  incomplete {op} '{name}': {}",
                    ty.map(|t| t.display()).unwrap_or_else(|| "?".into())
                );
            }
        }
        if show && std::env::var_os("SHOW_ALL").is_some() {
            for w in &report.warnings {
                println!("  warning: {w}");
            }
        }
        println!("{}\t{}\t{}", p.display(), produced.len(), n_complete);
        total += produced.len();
        complete += n_complete;
        models += 1;
    }
    let share = if total == 0 {
        0.0
    } else {
        100.0 * complete as f64 / total as f64
    };
    println!("TOTAL\t{models} models\t{total} values\t{complete} complete\t{share:.2}%");
}
