//! File bytes as [`Bytes`]: small files are read, large ones memory-mapped.
//!
//! A mapped file costs no memory until its pages are touched, and the
//! tensors that slice it share the mapping, so a model with gigabytes of
//! (external) data loads in the time it takes to decode its structure. The
//! mapping is private and read-only. As with every memory-mapped reader, a
//! file that another program truncates while it is mapped can no longer be
//! read; onnx-light itself never writes a file in place (saves go to a
//! temporary file and are renamed), so saving over a loaded model is safe.

use bytes::Bytes;
use memmap2::Mmap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Files of at least this many bytes are memory-mapped; smaller ones are
/// read (a mapping has a fixed cost, and thousands of tiny models load
/// faster read).
pub const MAP_THRESHOLD: u64 = 1 << 20;

/// The whole content of a regular file, read or mapped.
pub fn file_bytes(path: &Path) -> std::io::Result<Bytes> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let len = meta.len();
    if len >= MAP_THRESHOLD {
        // SAFETY: the mapping is read-only and private; see the module doc
        // for the one hazard every mapped reader shares (truncation by
        // another program).
        let map = unsafe { memmap2::MmapOptions::new().map_copy_read_only(&file)? };
        Ok(Bytes::from_owner(Mapping(map)))
    } else {
        let mut buf = Vec::with_capacity(len as usize);
        file.read_to_end(&mut buf)?;
        Ok(Bytes::from(buf))
    }
}

/// Owns a mapping for [`Bytes::from_owner`].
struct Mapping(Mmap);

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
