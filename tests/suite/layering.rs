//! The layering of `src/`: which top-level module uses which.
//!
//! Reads every `src/**/*.rs` file, collects the `crate::MODULE` paths in its
//! code (comments and doc comments are skipped; `crate::{a, b}` groups and
//! `super::` chains that climb to the crate root count too), builds the
//! graph of top-level modules, and fails on any dependency cycle that is
//! not in [`KNOWN_CYCLES`], printing the cycle and a line for each edge.
//! A known cycle that is gone must be removed from the list, so the list
//! can only shrink.
//!
//! Limits: a macro called by its bare name (`bail!`) and a type named only
//! through a re-export are not seen; `main.rs` is a separate crate (it uses
//! `onnx_light::`) and `lib.rs` only declares the modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The cycles between top-level modules that are allowed: none. Issue 9
/// removed the last two (`ops ⇄ runtime`: the kernels and their interface
/// moved to `ops/`, which reaches the runtime only through the `Subgraph`
/// trait; `proto ⇄ tensor`: the protobuf conversions moved to `proto/`).
/// None may be added.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// Where a dependency was seen: file and line.
type Evidence = (PathBuf, usize);

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in entries {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/`: `src/ops/mod.rs` is `["ops"]`,
/// `src/ops/ml/binarizer.rs` is `["ops", "ml", "binarizer"]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_string();
        if stem != "mod" {
            parts.push(stem);
        }
    }
    parts
}

/// The code of a line: without a `//` comment (a `//` inside a string
/// literal ends the line early, which can only hide a path, not invent one).
fn code_of(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !is_ident_char(c)).unwrap_or(s.len());
    &s[..end]
}

/// The first names of a `{a, b::c, d as e}` group starting at `s` (just after
/// the brace), down to the matching brace.
fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut at_item_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_item_start = true,
            c if c.is_whitespace() => {}
            _ if at_item_start && depth == 0 => {
                heads.push(ident(&s[i..]).to_string());
                at_item_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// The top-level modules a line of `file` (module path `me`) names.
fn uses_on_line(code: &str, me: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before_ok = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident_char(c) && c != ':');
        let after = &rest[i + "crate::".len()..];
        if before_ok {
            if let Some(group) = after.strip_prefix('{') {
                found.extend(group_heads(group));
            } else {
                found.push(ident(after).to_string());
            }
        }
        rest = after;
    }
    // `super::super::x` climbing to the crate root from a nested module
    let mut rest = code;
    while let Some(i) = rest.find("super::") {
        let before_ok = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident_char(c) && c != ':');
        let mut after = &rest[i..];
        let mut ups = 0usize;
        while let Some(a) = after.strip_prefix("super::") {
            ups += 1;
            after = a;
        }
        if before_ok && ups >= me.len() {
            found.push(ident(after).to_string());
        }
        rest = after;
    }
    found
}

/// Every edge `from -> to` between different top-level modules, with the
/// first place it was seen.
fn module_graph(src: &Path) -> (BTreeSet<String>, BTreeMap<(String, String), Evidence>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut modules = BTreeSet::new();
    for f in &files {
        let path = module_path(src, f);
        if let Some(top) = path.first() {
            if top != "lib" && top != "main" {
                modules.insert(top.clone());
            }
        }
    }
    let mut edges = BTreeMap::new();
    for f in &files {
        let me = module_path(src, f);
        let Some(top) = me.first() else { continue };
        if !modules.contains(top) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for (n, line) in text.lines().enumerate() {
            for used in uses_on_line(code_of(line), &me) {
                // a name that is not a module is a `#[macro_export]` macro or an item of lib.rs
                if used != *top && modules.contains(&used) {
                    edges
                        .entry((top.clone(), used))
                        .or_insert_with(|| (f.clone(), n + 1));
                }
            }
        }
    }
    (modules, edges)
}

/// Every elementary cycle, each starting at its smallest module.
fn cycles(
    modules: &BTreeSet<String>,
    edges: &BTreeMap<(String, String), Evidence>,
) -> Vec<Vec<String>> {
    let next = |m: &str| -> Vec<String> {
        edges
            .keys()
            .filter(|(a, _)| a == m)
            .map(|(_, b)| b.clone())
            .collect()
    };
    let mut found = Vec::new();
    for start in modules {
        // paths from `start` through modules greater than it, back to `start`
        let mut stack = vec![(vec![start.clone()], next(start))];
        while let Some((path, mut todo)) = stack.pop() {
            let Some(n) = todo.pop() else { continue };
            stack.push((path.clone(), todo));
            if n == *start {
                found.push(path);
            } else if n > *start && !path.contains(&n) {
                let mut p = path;
                p.push(n.clone());
                stack.push((p, next(&n)));
            }
        }
    }
    found.sort();
    found
}

fn show(cycle: &[String], edges: &BTreeMap<(String, String), Evidence>, src: &Path) -> String {
    let mut s = format!("{} -> {}\n", cycle.join(" -> "), cycle[0]);
    for (i, a) in cycle.iter().enumerate() {
        let b = &cycle[(i + 1) % cycle.len()];
        if let Some((f, line)) = edges.get(&(a.clone(), b.clone())) {
            let f = f.strip_prefix(src.parent().unwrap_or(src)).unwrap_or(f);
            s.push_str(&format!("    {a} -> {b}: {}:{line}\n", f.display()));
        }
    }
    s
}

#[test]
fn no_new_module_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (modules, edges) = module_graph(&src);
    assert!(modules.len() >= 5, "src/ has only {modules:?}");
    let found = cycles(&modules, &edges);
    let known: Vec<Vec<String>> = KNOWN_CYCLES
        .iter()
        .map(|c| c.iter().map(|m| m.to_string()).collect())
        .collect();
    let new: Vec<String> = found
        .iter()
        .filter(|c| !known.contains(c))
        .map(|c| show(c, &edges, &src))
        .collect();
    let gone: Vec<String> = known
        .iter()
        .filter(|c| !found.contains(c))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(
        new.is_empty(),
        "module cycles not in KNOWN_CYCLES (tests/suite/layering.rs); make the dependency \
         point one way:\n{}",
        new.concat()
    );
    assert!(
        gone.is_empty(),
        "these KNOWN_CYCLES are gone: remove them from the list in tests/suite/layering.rs: {gone:?}"
    );
}

#[test]
fn the_scanner_sees_groups_super_chains_and_skips_comments() {
    let me: Vec<String> = vec!["ops".into(), "ml".into(), "x".into()];
    assert_eq!(
        uses_on_line("use crate::{tensor::Tensor, proto, bail};", &me),
        ["tensor", "proto", "bail"]
    );
    assert_eq!(
        uses_on_line("let t = crate::shape::infer(m);", &me),
        ["shape"]
    );
    assert_eq!(
        uses_on_line("use super::super::super::runtime::Plan;", &me),
        ["runtime"]
    );
    assert!(uses_on_line("use super::super::forest::x;", &me).is_empty());
    assert!(uses_on_line(code_of("/// see [`crate::files::AtomicTarget`]"), &me).is_empty());
    assert!(uses_on_line("use mycrate::runtime;", &me).is_empty());
    // a two-module cycle and a three-module one, each found once
    let modules: BTreeSet<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    let mut edges = BTreeMap::new();
    for (x, y) in [("a", "b"), ("b", "a"), ("b", "c"), ("c", "d"), ("d", "b")] {
        edges.insert((x.to_string(), y.to_string()), (PathBuf::from("f.rs"), 1));
    }
    assert_eq!(
        cycles(&modules, &edges),
        vec![
            vec!["a".to_string(), "b".into()],
            vec!["b".into(), "c".into(), "d".into()]
        ]
    );
}
