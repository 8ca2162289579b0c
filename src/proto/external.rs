//! External data: tensors whose bytes live in side files
//! (`location`/`offset`/`length` in `external_data`).
//!
//! Locations are confined to the model's folder: an absolute path, a `..`
//! component, or a path that resolves (through symlinks) outside the folder
//! is refused.

use super::{ModelProto, ProtoError, StringStringEntryProto, TensorProto};
use crate::files::AtomicTarget;
use bytes::Bytes;
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Component, Path, PathBuf};

/// How `save` writes initializers.
#[derive(Clone, Debug, Default)]
pub struct ExternalOptions {
    /// Initializers of at least this many bytes go to an external file.
    pub threshold: Option<usize>,
    /// That file's name (default: the model's file name + `.data`).
    pub file_name: Option<String>,
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

/// Every tensor of a model (initializers, attribute tensors, subgraphs).
fn tensors_mut(model: &mut ModelProto) -> Vec<&mut TensorProto> {
    fn graph<'a>(g: &'a mut super::GraphProto, out: &mut Vec<&'a mut TensorProto>) {
        out.extend(g.initializer.iter_mut());
        for n in &mut g.node {
            for a in &mut n.attribute {
                out.extend(a.t.as_mut());
                out.extend(a.tensors.iter_mut());
                if let Some(sg) = &mut a.g {
                    graph(sg, out);
                }
                for sg in &mut a.graphs {
                    graph(sg, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    if let Some(g) = &mut model.graph {
        graph(g, &mut out);
    }
    out
}

/// Where one external tensor's bytes are.
struct ExternalRef {
    location: String,
    offset: u64,
    length: Option<u64>,
}

fn external_ref(t: &TensorProto) -> Result<ExternalRef, String> {
    let mut location = None;
    let mut offset = 0u64;
    let mut length = None;
    let number = |key: &str, v: &str| {
        v.trim().parse::<u64>().map_err(|_| {
            format!(
                "tensor '{}': external data {key} '{v}' is not a non-negative integer",
                t.name()
            )
        })
    };
    for kv in &t.external_data {
        match kv.key() {
            "location" => location = Some(kv.value().to_string()),
            "offset" => offset = number("offset", kv.value())?,
            "length" => length = Some(number("length", kv.value())?),
            _ => {}
        }
    }
    let location =
        location.ok_or_else(|| format!("tensor '{}' is external but has no location", t.name()))?;
    Ok(ExternalRef {
        location,
        offset,
        length,
    })
}

/// Attaches every external tensor's bytes as `raw_data`.
///
/// Each data file is opened once (memory-mapped when large, see
/// [`crate::files::read_regular`]); each tensor's `raw_data` is a zero-copy slice of
/// it, so nothing is read until a tensor's values are used. All references
/// are checked first, and the model is left untouched on error.
pub fn resolve_external_data(model: &mut ModelProto, dir: &Path) -> Result<(), String> {
    let mut tensors: Vec<&mut TensorProto> = tensors_mut(model)
        .into_iter()
        .filter(|t| t.data_location == Some(1))
        .collect();
    if tensors.is_empty() {
        return Ok(());
    }
    let mut files: HashMap<PathBuf, Bytes> = HashMap::new();
    let mut slices: Vec<Bytes> = Vec::with_capacity(tensors.len());
    for t in &tensors {
        let r = external_ref(t)?;
        let loc = &r.location;
        let path = safe_location(dir, loc)?;
        let data = match files.get(&path) {
            Some(d) => d.clone(),
            None => {
                let d = crate::files::read_regular(&path)
                    .map_err(|e| format!("external data file '{loc}': {e}"))?;
                files.insert(path, d.clone());
                d
            }
        };
        let size = data.len() as u64;
        let len = r.length.unwrap_or(size.saturating_sub(r.offset));
        let end = r.offset.checked_add(len).filter(|&end| end <= size);
        let Some(end) = end else {
            return Err(format!(
                "tensor '{}': external range offset {} length {len} is past the end of '{loc}' ({size} bytes)",
                t.name(),
                r.offset
            ));
        };
        // both fit in usize: they are within a file we hold in memory
        slices.push(data.slice(r.offset as usize..end as usize));
    }
    for (t, bytes) in tensors.iter_mut().zip(slices) {
        t.raw_data = Some(bytes);
        t.data_location = None;
        t.external_data.clear();
    }
    Ok(())
}

/// Tensor bytes bound for one external data file, written by
/// with the model that references them by [`write_model_files`].
pub struct PendingData {
    target: PathBuf,
    /// Each tensor's bytes with the offset it was given.
    parts: Vec<(usize, Bytes)>,
}

/// Moves large tensors' raw bytes out of `model` into a [`PendingData`] for
/// one external file beside `path`, each tensor aligned to 64 bytes, and
/// points the tensors at it. `None` when no tensor reaches the threshold.
pub fn externalize(
    model: &mut ModelProto,
    path: &Path,
    threshold: usize,
    file_name: Option<&str>,
) -> Result<Option<PendingData>, ProtoError> {
    let name = match file_name {
        Some(n) => n.to_string(),
        None => format!(
            "{}.data",
            path.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| "model".into())
        ),
    };
    if name.is_empty()
        || name == "."
        || name.contains('/')
        || name.contains('\\')
        || name.contains("..")
    {
        return Err(ProtoError::new(
            path,
            format!("external data file name '{name}' must be a plain file name"),
        ));
    }
    let mut tensors: Vec<&mut TensorProto> = tensors_mut(model)
        .into_iter()
        .filter(|t| t.data_location != Some(1))
        .collect();
    // values in typed fields (as parsed from text) become raw bytes first
    for t in tensors.iter_mut() {
        if t.raw_data.is_none() && t.data_type() != 8 {
            if let Ok(v) = crate::proto::from_proto(t) {
                let raw = crate::proto::to_proto(&v, "").raw_data;
                if raw.as_ref().is_some_and(|r| r.len() >= threshold) {
                    t.float_data.clear();
                    t.double_data.clear();
                    t.int32_data.clear();
                    t.int64_data.clear();
                    t.uint64_data.clear();
                    t.raw_data = raw;
                }
            }
        }
    }
    tensors.retain(|t| t.raw_data.as_ref().is_some_and(|r| r.len() >= threshold));
    if tensors.is_empty() {
        return Ok(None);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut parts = Vec::with_capacity(tensors.len());
    let mut offset = 0usize;
    for t in tensors {
        // align each tensor to 64 bytes, like other writers do for mmap use
        offset = offset.next_multiple_of(64);
        let raw = t.raw_data.take().unwrap_or_default();
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
        let len = raw.len();
        parts.push((offset, raw));
        offset += len;
    }
    Ok(Some(PendingData {
        target: dir.join(name),
        parts,
    }))
}

impl PendingData {
    /// The data file's path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Streams the bytes to a temporary file beside the target (see
    /// [`crate::files::AtomicTarget`]); the caller commits it.
    fn stage(self) -> Result<AtomicTarget, ProtoError> {
        let target = self.target;
        let err = |e: std::io::Error| ProtoError::new(&target, e.to_string());
        let mut staged = AtomicTarget::new(&target).map_err(err)?;
        let mut out = BufWriter::with_capacity(1 << 20, staged.file());
        let mut at = 0usize;
        const ZEROS: [u8; 64] = [0; 64];
        for (offset, raw) in &self.parts {
            out.write_all(&ZEROS[..offset - at]).map_err(err)?;
            out.write_all(raw).map_err(err)?;
            at = offset + raw.len();
        }
        out.flush().map_err(err)?;
        drop(out);
        Ok(staged)
    }
}

/// Writes a model file and, when given, the data file it references, so
/// that either both are replaced or neither is: the model's target is
/// checked first, both are written to temporary files, then the data file
/// and the model are renamed into place. On failure no temporary or data
/// file is left behind.
pub fn write_model_files(
    path: &Path,
    bytes: &[u8],
    data: Option<PendingData>,
) -> Result<(), ProtoError> {
    let err = |p: &Path, e: std::io::Error| ProtoError::new(p, e.to_string());
    let mut model = AtomicTarget::new(path).map_err(|e| err(path, e))?;
    let staged = data.map(PendingData::stage).transpose()?;
    model.file().write_all(bytes).map_err(|e| err(path, e))?;
    if let Some(d) = staged {
        let t = d.target().to_path_buf();
        d.commit().map_err(|e| err(&t, e))?;
    }
    model.commit().map_err(|e| err(path, e))
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
