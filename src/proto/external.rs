//! External data: tensors whose bytes live in side files
//! (`location`/`offset`/`length` in `external_data`).
//!
//! Locations are confined to the model's folder: an absolute path, a `..`
//! component, or a path that resolves (through symlinks) outside the folder
//! is refused.

use super::{ModelProto, ProtoError, StringStringEntryProto, TensorProto};
use memmap2::Mmap;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// How `save` writes initializers.
#[derive(Clone, Debug, Default)]
pub struct ExternalOptions {
    /// Initializers of at least this many bytes go to an external file.
    pub threshold: Option<usize>,
    /// That file's name (default: the model's file name + `.data`).
    pub file_name: Option<String>,
}

fn for_each_tensor(model: &mut ModelProto, f: &mut dyn FnMut(&mut TensorProto)) {
    fn graph(g: &mut super::GraphProto, f: &mut dyn FnMut(&mut TensorProto)) {
        for t in &mut g.initializer {
            f(t);
        }
        for n in &mut g.node {
            for a in &mut n.attribute {
                if let Some(t) = &mut a.t {
                    f(t);
                }
                for t in &mut a.tensors {
                    f(t);
                }
                if let Some(sg) = &mut a.g {
                    graph(sg, f);
                }
                for sg in &mut a.graphs {
                    graph(sg, f);
                }
            }
        }
    }
    if let Some(g) = &mut model.graph {
        graph(g, f);
    }
}

/// Checks that `location` names a file inside `dir` and returns its path.
pub fn safe_location(dir: &Path, location: &str) -> Result<PathBuf, String> {
    let rel = Path::new(location);
    if location.is_empty() {
        return Err("external data location is empty".into());
    }
    if rel.is_absolute() || location.starts_with('/') || location.starts_with('\\') {
        return Err(format!(
            "external data location '{location}' is absolute; it must be relative to the model's folder"
        ));
    }
    if rel.components().any(|c| {
        matches!(
            c,
            Component::ParentDir | Component::Prefix(_) | Component::RootDir
        )
    }) || location.split(['/', '\\']).any(|c| c == "..")
    {
        return Err(format!(
            "external data location '{location}' leaves the model's folder ('..')"
        ));
    }
    let full = dir.join(rel);
    let base = dir
        .canonicalize()
        .map_err(|e| format!("model folder {}: {e}", dir.display()))?;
    let real = full
        .canonicalize()
        .map_err(|e| format!("external data file '{location}': {e}"))?;
    if !real.starts_with(&base) {
        return Err(format!(
            "external data location '{location}' resolves outside the model's folder"
        ));
    }
    Ok(real)
}

/// Loads every external tensor's bytes into `raw_data` (files are memory
/// mapped once each; only the referenced ranges are copied).
pub fn resolve_external_data(model: &mut ModelProto, dir: &Path) -> Result<(), String> {
    let mut maps: HashMap<PathBuf, Mmap> = HashMap::new();
    let mut err: Option<String> = None;
    for_each_tensor(model, &mut |t| {
        if err.is_some() || t.data_location != Some(1) {
            return;
        }
        let mut location = None;
        let mut offset = 0u64;
        let mut length: Option<u64> = None;
        for kv in &t.external_data {
            match kv.key() {
                "location" => location = Some(kv.value().to_string()),
                "offset" => offset = kv.value().parse().unwrap_or(u64::MAX),
                "length" => length = kv.value().parse().ok(),
                _ => {}
            }
        }
        let res = (|| -> Result<Vec<u8>, String> {
            let loc = location
                .ok_or_else(|| format!("tensor '{}' is external but has no location", t.name()))?;
            let path = safe_location(dir, &loc)?;
            if !maps.contains_key(&path) {
                let file = std::fs::File::open(&path).map_err(|e| format!("{loc}: {e}"))?;
                // SAFETY: the file is opened read-only and not modified by us
                // while mapped; a concurrent external change is the user's risk,
                // as with any memory-mapped input.
                let map = unsafe { Mmap::map(&file) }.map_err(|e| format!("{loc}: {e}"))?;
                maps.insert(path.clone(), map);
            }
            let map = &maps[&path];
            let len = length.unwrap_or((map.len() as u64).saturating_sub(offset));
            let end = offset.checked_add(len).filter(|&e| e <= map.len() as u64);
            let end = end.ok_or_else(|| {
                format!(
                    "tensor '{}': external range {offset}+{len} is past the end of '{loc}' ({} bytes)",
                    t.name(),
                    map.len()
                )
            })?;
            Ok(map[offset as usize..end as usize].to_vec())
        })();
        match res {
            Ok(bytes) => {
                t.raw_data = Some(bytes);
                t.data_location = None;
                t.external_data.clear();
            }
            Err(e) => err = Some(e),
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Moves large tensors' raw bytes to one external file beside `path`.
pub fn externalize(
    model: &mut ModelProto,
    path: &Path,
    threshold: usize,
    file_name: Option<&str>,
) -> Result<(), ProtoError> {
    let name = match file_name {
        Some(n) => n.to_string(),
        None => format!(
            "{}.data",
            path.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| "model".into())
        ),
    };
    if name.contains('/') || name.contains('\\') || name.contains("..") {
        return Err(ProtoError::new(
            path,
            format!("external data file name '{name}' must be a plain file name"),
        ));
    }
    let mut data: Vec<u8> = Vec::new();
    for_each_tensor(model, &mut |t| {
        let Some(raw) = &t.raw_data else { return };
        if raw.len() < threshold {
            return;
        }
        // align each tensor to 64 bytes, like other writers do for mmap use
        while !data.len().is_multiple_of(64) {
            data.push(0);
        }
        let offset = data.len();
        data.extend_from_slice(raw);
        let kv = |k: &str, v: String| StringStringEntryProto {
            key: Some(k.into()),
            value: Some(v),
        };
        t.external_data = vec![
            kv("location", name.clone()),
            kv("offset", offset.to_string()),
            kv("length", raw.len().to_string()),
        ];
        t.data_location = Some(1);
        t.raw_data = None;
    });
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    super::write_atomic(&dir.join(&name), &data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_locations_are_refused() {
        let dir = std::env::temp_dir();
        assert!(safe_location(&dir, "/etc/passwd")
            .unwrap_err()
            .contains("absolute"));
        assert!(safe_location(&dir, "../x").unwrap_err().contains(".."));
        assert!(safe_location(&dir, "a/../../x").unwrap_err().contains(".."));
        assert!(safe_location(&dir, "").is_err());
    }
}
