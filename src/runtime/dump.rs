//! Dump folders: values written as `.npy` (and `.pb` TensorProto) files
//! with a `manifest.json` mapping each value name to its file, and reading
//! such a folder back (`compare` against a dump).
//!
//! File names come from value names, which converters fill with dots,
//! slashes, colons and non-ASCII characters: every character outside
//! `[A-Za-z0-9._-]` becomes `_`, a leading dot gets a `_` in front, long
//! names are cut, and names that collide (case-insensitively, for file
//! systems that fold case) get `_2`, `_3`… The manifest is the map back.

use crate::tensor::{self, Tensor};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The manifest's file name inside a dump folder.
pub const MANIFEST: &str = "manifest.json";

/// Longest file stem written (the name's end is cut, the manifest keeps it whole).
const MAX_STEM: usize = 96;

/// One value of a dump.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub name: String,
    /// The `.npy` file (a `.pb` when the type has no `.npy` form).
    pub file: String,
    pub elem_type: String,
    pub shape: Vec<usize>,
    /// The index of the node that wrote the value; `None` for inputs and
    /// initializers.
    pub node_index: Option<usize>,
    /// The `.pb` TensorProto file (`dump --pb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pb: Option<String>,
}

/// A file stem for a value name: safe on any file system, never empty,
/// never hidden.
pub fn file_stem(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with('.') {
        s.insert(0, '_');
    }
    // ASCII only by now, so any byte offset is a character boundary
    s.truncate(MAX_STEM);
    while s.ends_with('.') {
        s.pop();
    }
    if s.is_empty() {
        s.push_str("value");
    }
    s
}

/// Writes values into a folder, one file (two with `.pb`) per value, and
/// the manifest last. A failure can [`DumpWriter::abandon`] what was written.
pub struct DumpWriter {
    dir: PathBuf,
    pb: bool,
    used: HashSet<String>,
    entries: Vec<ManifestEntry>,
    written: Vec<PathBuf>,
    bytes: u64,
}

impl DumpWriter {
    /// Creates the folder if needed and checks that it takes files.
    pub fn new(dir: &Path, pb: bool) -> Result<DumpWriter, String> {
        if dir.exists() && !dir.is_dir() {
            return Err(format!("{}: exists and is not a folder", dir.display()));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the folder: {e}", dir.display()))?;
        let probe = dir.join(".onnx-light-write-test");
        std::fs::write(&probe, b"")
            .map_err(|e| format!("{}: cannot write there: {e}", dir.display()))?;
        let _ = std::fs::remove_file(&probe);
        Ok(DumpWriter {
            dir: dir.to_path_buf(),
            pb,
            used: HashSet::new(),
            entries: Vec::new(),
            written: Vec::new(),
            bytes: 0,
        })
    }

    fn unique_stem(&mut self, name: &str) -> String {
        let base = file_stem(name);
        let mut stem = base.clone();
        let mut k = 2;
        // MANIFEST's stem is kept free so no value file is mistaken for it
        while self.used.contains(&stem.to_lowercase()) || stem.eq_ignore_ascii_case("manifest") {
            stem = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(stem.to_lowercase());
        stem
    }

    fn put(&mut self, file: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.dir.join(file);
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        self.written.push(path);
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Writes one tensor. A type `.npy` cannot hold (strings, bfloat16,
    /// 8-bit floats…) is written as `.pb` only.
    pub fn write(
        &mut self,
        name: &str,
        t: &Tensor,
        node_index: Option<usize>,
    ) -> Result<(), String> {
        use prost::Message;
        let stem = self.unique_stem(name);
        let npy = tensor::write_npy(t).ok();
        let mut pb_file = None;
        if self.pb || npy.is_none() {
            let f = format!("{stem}.pb");
            let bytes = crate::proto::to_proto(t, name).encode_to_vec();
            self.put(&f, &bytes)
                .map_err(|e| format!("writing '{name}': {e}"))?;
            pb_file = Some(f);
        }
        let file = match npy {
            Some(bytes) => {
                let f = format!("{stem}.npy");
                self.put(&f, &bytes)
                    .map_err(|e| format!("writing '{name}': {e}"))?;
                f
            }
            None => pb_file.clone().unwrap_or_default(),
        };
        self.entries.push(ManifestEntry {
            name: name.to_string(),
            file,
            elem_type: t.dtype().to_string(),
            shape: t.shape().to_vec(),
            node_index,
            pb: if self.pb { pb_file } else { None },
        });
        Ok(())
    }

    /// Whether a value of this name was written.
    pub fn has(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Writes the manifest (atomically) and returns its entries.
    pub fn finish(mut self) -> Result<Vec<ManifestEntry>, String> {
        let text = serde_json::to_string_pretty(&self.entries).unwrap_or_default();
        let path = self.dir.join(MANIFEST);
        if let Err(e) = crate::files::write_atomic(&path, text.as_bytes()) {
            let n = self.abandon_files();
            return Err(format!(
                "{}: {e}; removed the {n} value files written",
                path.display()
            ));
        }
        Ok(std::mem::take(&mut self.entries))
    }

    fn abandon_files(&mut self) -> usize {
        let mut n = 0;
        for p in self.written.drain(..) {
            if std::fs::remove_file(&p).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Removes the files written so far (after a failure); returns how many.
    pub fn abandon(mut self) -> usize {
        self.abandon_files()
    }
}

/// Reads a dump folder's manifest.
pub fn read_manifest(dir: &Path) -> Result<Vec<ManifestEntry>, String> {
    let path = dir.join(MANIFEST);
    let text = crate::files::read_text(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let entries: Vec<ManifestEntry> = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a dump manifest: {e}", path.display()))?;
    for e in &entries {
        if !is_plain_file_name(&e.file) {
            return Err(format!(
                "{}: value '{}' names the file '{}', which is not a plain file name inside the folder",
                path.display(),
                e.name,
                e.file
            ));
        }
    }
    Ok(entries)
}

/// A name with no folder part (no separators, not `.` or `..`).
fn is_plain_file_name(f: &str) -> bool {
    !f.is_empty() && f != "." && f != ".." && !f.contains(['/', '\\']) && !f.contains('\0')
}

/// Reads the tensor of a manifest entry (`.npy`, or `.pb` TensorProto).
pub fn read_entry(dir: &Path, e: &ManifestEntry) -> Result<Tensor, String> {
    if !is_plain_file_name(&e.file) {
        return Err(format!("'{}' is not a plain file name", e.file));
    }
    let path = dir.join(&e.file);
    let bytes = std::fs::read(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    let t = if e.file.ends_with(".pb") {
        match crate::proto::value_from_pb_bytes(&bytes, crate::proto::PbKind::Tensor) {
            Ok(crate::tensor::Value::Tensor(t)) => t,
            Ok(other) => {
                return Err(format!(
                    "{}: holds {}, not a tensor",
                    path.display(),
                    other.describe()
                ))
            }
            Err(err) => return Err(format!("{}: {err}", path.display())),
        }
    } else {
        tensor::read_npy(&bytes).map_err(|err| format!("{}: {err}", path.display()))?
    };
    if t.shape() != e.shape.as_slice() {
        return Err(format!(
            "{}: shape {:?}, the manifest says {:?}",
            path.display(),
            t.shape(),
            e.shape
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe_and_unique() {
        assert_eq!(file_stem("conv1.weight"), "conv1.weight");
        assert_eq!(file_stem("gpu_0/data_0"), "gpu_0_data_0");
        assert_eq!(file_stem("out:0"), "out_0");
        assert_eq!(file_stem(".."), "_");
        assert_eq!(file_stem(""), "value");
        assert_eq!(file_stem("ñame"), "_ame");
        assert!(file_stem(&"x".repeat(500)).len() <= MAX_STEM);
        let dir = std::env::temp_dir().join(format!("onnx-light-dump-unit-{}", std::process::id()));
        let mut w = DumpWriter::new(&dir, false).unwrap();
        let t = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        for n in ["a/b", "a:b", "A_B", "manifest"] {
            w.write(n, &t, Some(0)).unwrap();
        }
        let entries = w.finish().unwrap();
        let files: Vec<&str> = entries.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(
            files,
            ["a_b.npy", "a_b_2.npy", "A_B_3.npy", "manifest_2.npy"]
        );
        let back = read_manifest(&dir).unwrap();
        assert_eq!(back, entries);
        let t2 = read_entry(&dir, &back[1]).unwrap();
        assert_eq!(t2.to_f64_vec().unwrap(), vec![1.0, 2.0]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
