//! Every crate under `[dependencies]` in Cargo.toml is used by the code in
//! `src/` (a `name::` path, with `-` spelled `_`): a dependency that nothing
//! uses is removed, not kept "for later". (`cargo machete` does the same
//! check; it is not installed in CI, which builds it from source too slowly.)

use std::path::{Path, PathBuf};

/// The names under `[dependencies]`, in file order.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if !inside || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            names.push(name.trim().trim_matches('"').to_string());
        }
    }
    names
}

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Whether `code` names the crate `ident` as a path root (`ident::`), not
/// as the tail of another name (`my_ident::`, `x::ident::`).
fn names_crate(code: &str, ident: &str) -> bool {
    let pat = format!("{ident}::");
    code.match_indices(&pat).any(|(i, _)| {
        code[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'))
    })
}

#[test]
fn every_dependency_is_used_in_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let deps = dependencies(&manifest);
    assert!(deps.len() >= 5, "read only {deps:?} from [dependencies]");
    let mut files = Vec::new();
    rust_sources(&root.join("src"), &mut files);
    // code only: a crate named in a comment is not a use of it
    let code: String = files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
                .lines()
                .map(|l| l.split("//").next().unwrap_or("").to_string() + "\n")
                .collect::<Vec<_>>()
        })
        .collect();
    let unused: Vec<&String> = deps
        .iter()
        .filter(|d| !names_crate(&code, &d.replace('-', "_")))
        .collect();
    assert!(
        unused.is_empty(),
        "[dependencies] not used anywhere in src/ (remove them from Cargo.toml): {unused:?}"
    );
}

#[test]
fn the_check_reads_the_manifest_and_paths_as_cargo_means_them() {
    let m = "[package]\nname = \"x\"\n[dependencies]\nfoo = \"1\"\nbar-baz = { version = \"2\" }\n\n[dev-dependencies]\nqux = \"3\"\n";
    assert_eq!(dependencies(m), ["foo", "bar-baz"]);
    assert!(names_crate("use foo::Bar;", "foo"));
    assert!(names_crate("#[derive(thiserror::Error)]", "thiserror"));
    assert!(!names_crate("use myfoo::Bar;", "foo"));
    assert!(!names_crate("use crate::foo::Bar;", "foo"));
}
