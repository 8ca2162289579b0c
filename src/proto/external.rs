//! External data: tensors whose bytes live in side files
//! (`location`/`offset`/`length` in `external_data`).
//!
//! Locations are confined to the model's folder: an absolute path, a `..`
//! component, or a path that resolves (through symlinks) outside the folder
//! is refused.

use super::{ModelProto, ProtoError, StringStringEntryProto, TensorProto};
use rayon::prelude::*;
use std::collections::HashMap;
use std::fs::File;
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

/// Reads exactly `buf.len()` bytes at `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

/// Loads every external tensor's bytes into `raw_data`.
///
/// Each data file is opened once; each tensor's range is read straight
/// into its own buffer (one allocation, one copy from the OS), tensors in
/// parallel. All references are checked before anything is read, and the
/// model is left untouched on error.
pub fn resolve_external_data(model: &mut ModelProto, dir: &Path) -> Result<(), String> {
    let mut tensors: Vec<&mut TensorProto> = tensors_mut(model)
        .into_iter()
        .filter(|t| t.data_location == Some(1))
        .collect();
    if tensors.is_empty() {
        return Ok(());
    }
    // (file, its size) per resolved path; (file index, offset, length) per tensor
    let mut files: Vec<(File, u64)> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut jobs: Vec<(usize, u64, usize)> = Vec::with_capacity(tensors.len());
    for t in &tensors {
        let r = external_ref(t)?;
        let loc = &r.location;
        let path = safe_location(dir, loc)?;
        let fi = match index.get(&path) {
            Some(&i) => i,
            None => {
                let file =
                    File::open(&path).map_err(|e| format!("external data file '{loc}': {e}"))?;
                let meta = file
                    .metadata()
                    .map_err(|e| format!("external data file '{loc}': {e}"))?;
                if !meta.is_file() {
                    return Err(format!(
                        "external data location '{loc}' is not a regular file"
                    ));
                }
                files.push((file, meta.len()));
                index.insert(path, files.len() - 1);
                files.len() - 1
            }
        };
        let size = files[fi].1;
        let len = r.length.unwrap_or(size.saturating_sub(r.offset));
        let in_range = r.offset.checked_add(len).is_some_and(|end| end <= size);
        if !in_range {
            return Err(format!(
                "tensor '{}': external range offset {} length {len} is past the end of '{loc}' ({size} bytes)",
                t.name(),
                r.offset
            ));
        }
        let len = usize::try_from(len)
            .map_err(|_| format!("tensor '{}': external data too large", t.name()))?;
        jobs.push((fi, r.offset, len));
    }
    let datas: Vec<Vec<u8>> = jobs
        .par_iter()
        .map(|&(fi, offset, len)| {
            let mut buf = vec![0u8; len];
            read_at(&files[fi].0, &mut buf, offset).map(|_| buf)
        })
        .collect::<std::io::Result<_>>()
        .map_err(|e| format!("reading external data: {e}"))?;
    for (t, bytes) in tensors.iter_mut().zip(datas) {
        t.raw_data = Some(bytes);
        t.data_location = None;
        t.external_data.clear();
    }
    Ok(())
}

/// Moves large tensors' raw bytes to one external file beside `path`
/// (streamed to disk, each tensor aligned to 64 bytes). No file is written
/// when no tensor reaches the threshold.
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
        .filter(|t| t.raw_data.as_ref().is_some_and(|r| r.len() >= threshold))
        .collect();
    if tensors.is_empty() {
        return Ok(());
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let target = dir.join(&name);
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let io_err = |e: std::io::Error| {
        let _ = std::fs::remove_file(&tmp);
        ProtoError::new(&target, e.to_string())
    };
    let file = File::create(&tmp).map_err(|e| ProtoError::new(&target, e.to_string()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut offset = 0usize;
    const ZEROS: [u8; 64] = [0; 64];
    for t in &mut tensors {
        // align each tensor to 64 bytes, like other writers do for mmap use
        let pad = (64 - offset % 64) % 64;
        out.write_all(&ZEROS[..pad]).map_err(io_err)?;
        offset += pad;
        let raw = t.raw_data.take().unwrap_or_default();
        out.write_all(&raw).map_err(io_err)?;
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
        offset += raw.len();
    }
    let file = out.into_inner().map_err(|e| io_err(e.into_error()))?;
    drop(file);
    std::fs::rename(&tmp, &target).map_err(io_err)
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
