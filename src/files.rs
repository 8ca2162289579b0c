//! Reading and writing the user's files without being fooled by them.
//!
//! Every file onnx-light reads (models, scripts, `npy(...)`, `pb(...)`,
//! external data) goes through [`read_regular`], and every file it writes
//! (`save`, `--out`, external data) through [`AtomicTarget`]:
//!
//! - Only regular files are read. A FIFO with no writer would block forever
//!   and `/dev/zero` never ends, so the kind of file is checked before it is
//!   opened, and it is opened non-blocking so that a file swapped for a FIFO
//!   in between cannot block either.
//! - Writes go to a temporary file beside the target, then a rename, so a
//!   failed write leaves the old file untouched. A symlink is written
//!   through to its target (as editors do), and a target that exists but is
//!   not a regular file (a device, a folder, a FIFO) is refused before
//!   anything is written. A temporary file is removed when the write fails.

use bytes::Bytes;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Files of at least this many bytes are memory-mapped by [`read_regular`];
/// smaller ones are read (a mapping has a fixed cost, and thousands of tiny
/// models load faster read).
pub const MAP_THRESHOLD: u64 = 1 << 20;

fn refuse(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_string())
}

/// What kind of non-regular file `meta` describes, for error messages.
fn kind_name(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

fn not_regular(meta: &std::fs::Metadata) -> io::Error {
    match kind_name(meta) {
        "not a regular file" => refuse("not a regular file"),
        k => refuse(&format!("not a regular file ({k})")),
    }
}

/// Opens a regular file for reading; anything else is refused before it is
/// opened (and the open itself never blocks).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    // the path may have been swapped between the check and the open
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok(file)
}

/// The whole content of a regular file: read when small, memory-mapped
/// from [`MAP_THRESHOLD`] bytes on (a mapped file costs no memory until its
/// pages are touched, and the slices of it share the mapping).
pub fn read_regular(path: &Path) -> io::Result<Bytes> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len >= MAP_THRESHOLD {
        // SAFETY: the mapping is read-only and private. As with every
        // memory-mapped reader, a file that another program truncates
        // while it is mapped can no longer be read; onnx-light itself never
        // writes a file in place (see `AtomicTarget`).
        let map = unsafe { memmap2::MmapOptions::new().map_copy_read_only(&file)? };
        Ok(Bytes::from_owner(Mapping::new(map)))
    } else {
        let mut buf = Vec::new();
        buf.try_reserve_exact(len as usize)
            .map_err(|_| refuse("the file is too large to read"))?;
        // a file that grew since its size was read is read only up to the
        // size it had
        file.take(len).read_to_end(&mut buf)?;
        Ok(Bytes::from(buf))
    }
}

/// The first `n` bytes of a regular file (fewer when it is shorter).
pub fn read_head(path: &Path, n: u64) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    open_regular(path)?.take(n).read_to_end(&mut head)?;
    Ok(head)
}

/// A regular file's content as UTF-8 text.
pub fn read_text(path: &Path) -> io::Result<String> {
    let bytes = read_regular(path)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| refuse("not a UTF-8 text file"))
}

/// Owns a mapping for [`Bytes::from_owner`]; its address range is listed
/// in [`MAPPINGS`] while it lives.
struct Mapping(memmap2::Mmap);

/// The address ranges (start, length) of the live [`Mapping`]s: only pages
/// inside one of them are ever given back by [`release_mapped_pages`].
static MAPPINGS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

fn mappings() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    MAPPINGS.lock().unwrap_or_else(|p| p.into_inner())
}

impl Mapping {
    fn new(map: memmap2::Mmap) -> Mapping {
        mappings().push((map.as_ptr() as usize, map.len()));
        Mapping(map)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        let start = self.0.as_ptr() as usize;
        let mut m = mappings();
        if let Some(i) = m.iter().position(|&(s, _)| s == start) {
            m.swap_remove(i);
        }
        // the field unmaps after this
    }
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Gives back the resident pages of `bytes` when it lies inside a file
/// mapping made by [`read_regular`] (a no-op otherwise): once a tensor has
/// been copied out of a mapped file, its pages need not stay counted in the
/// process's memory next to the copy. The mapping is private and never
/// written, so reading the range again later refills it from the file.
/// Only whole pages inside `bytes` are released.
pub fn release_mapped_pages(bytes: &[u8]) {
    let page = page_size();
    let lo = (bytes.as_ptr() as usize).next_multiple_of(page);
    let hi = (bytes.as_ptr() as usize + bytes.len()) / page * page;
    if hi <= lo {
        return;
    }
    // the lock keeps the mapping alive (its drop takes the lock) while the
    // range is advised
    let m = mappings();
    if m.iter().any(|&(s, len)| lo >= s && hi <= s + len) {
        // SAFETY: [lo, hi) is page-aligned and inside a live private,
        // read-only file mapping that nothing writes: MADV_DONTNEED only
        // drops its resident pages, and later reads fault them back in from
        // the file with the same content.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED);
        }
    }
}

fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
    })
}

/// How many symlinks [`AtomicTarget::new`] follows before giving up.
const MAX_LINKS: usize = 40;

/// A file about to be replaced atomically: bytes are written to a
/// temporary file beside the final target, which [`AtomicTarget::commit`]
/// renames into place. Dropped without a commit, the temporary file is
/// removed, so a failed save leaves nothing behind.
pub struct AtomicTarget {
    /// Where the bytes end up (symlinks resolved).
    target: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

/// Follows `path` through symlinks to the file a write should replace.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = if link.is_absolute() {
                    link
                } else {
                    p.parent().unwrap_or(Path::new(".")).join(link)
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(refuse("too many levels of symbolic links"))
}

impl AtomicTarget {
    /// Prepares to replace `path`: a symlink is followed to its target; an
    /// existing target that is not a regular file is refused; the
    /// temporary file is created.
    pub fn new(path: &Path) -> io::Result<AtomicTarget> {
        let target = resolve_links(path)?;
        match std::fs::metadata(&target) {
            Ok(m) if !m.is_file() => return Err(not_regular(&m)),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let name = target
            .file_name()
            .ok_or_else(|| refuse("not a file path"))?
            .to_string_lossy()
            .into_owned();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        // keep the permissions of the file being replaced
        if let Ok(m) = std::fs::metadata(&target) {
            let _ = file.set_permissions(m.permissions());
        }
        Ok(AtomicTarget {
            target,
            tmp,
            file: Some(file),
        })
    }

    /// The final path (symlinks resolved).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("the temporary file is open until commit")
    }

    /// Flushes the temporary file and renames it over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("commit runs once");
        file.sync_data().or_else(|e| {
            // some filesystems (tmpfs) cannot sync; the rename still orders
            if e.kind() == io::ErrorKind::Unsupported {
                Ok(())
            } else {
                Err(e)
            }
        })?;
        drop(file);
        std::fs::rename(&self.tmp, &self.target)?;
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicTarget {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            self.file.take();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Replaces `path` with `bytes` atomically (see [`AtomicTarget`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut t = AtomicTarget::new(path)?;
    t.file().write_all(bytes)?;
    t.commit()
}

/// A path typed by the user with `~` or `~/...` at its start, expanded as
/// a shell does to the home folder (`$HOME`). Anything else (`~user`, a
/// `~` further on, no home folder known) is returned as it is.
pub fn expand_home(path: &str) -> String {
    expand_home_with(path, std::env::var_os("HOME"))
}

fn expand_home_with(path: &str, home: Option<std::ffi::OsString>) -> String {
    let Some(h) = home.and_then(|h| h.into_string().ok()) else {
        return path.to_string();
    };
    if h.is_empty() {
        return path.to_string();
    }
    if path == "~" {
        return h;
    }
    match path.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", h.trim_end_matches('/')),
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_leading_tilde_is_the_home_folder() {
        use super::expand_home_with as x;
        let home = || Some(std::ffi::OsString::from("/home/u"));
        assert_eq!(x("~/m.onnx", home()), "/home/u/m.onnx");
        assert_eq!(x("~", home()), "/home/u");
        assert_eq!(x("~/", home()), "/home/u/");
        assert_eq!(x("~/a/b", Some("/".into())), "/a/b");
        assert_eq!(x("~user/m.onnx", home()), "~user/m.onnx");
        assert_eq!(x("a/~/m.onnx", home()), "a/~/m.onnx");
        assert_eq!(x("m.onnx", home()), "m.onnx");
        assert_eq!(x("~/m.onnx", None), "~/m.onnx");
        assert_eq!(x("~/m.onnx", Some("".into())), "~/m.onnx");
    }

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("onnx-light-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn devices_folders_and_fifos_are_refused_before_reading() {
        let e = read_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read_regular(Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("folder"), "{e}");
        #[cfg(unix)]
        {
            let d = scratch("fifo");
            let f = d.join("pipe");
            let c = std::ffi::CString::new(f.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a valid, NUL-terminated path
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let e = read_regular(&f).unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
            let e = write_atomic(&f, b"x").unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
            let _ = std::fs::remove_dir_all(&d);
        }
    }

    #[test]
    fn writes_go_through_symlinks_and_leave_nothing_on_failure() {
        let d = scratch("links");
        let real = d.join("real.txt");
        std::fs::write(&real, b"old").unwrap();
        let link = d.join("link.txt");
        #[cfg(unix)]
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        #[cfg(unix)]
        {
            write_atomic(&link, b"new").unwrap();
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(std::fs::read(&real).unwrap(), b"new");
        }
        // a folder as the target: refused, no temporary file left
        let e = write_atomic(&d, b"x").unwrap_err();
        assert!(e.to_string().contains("folder"), "{e}");
        let e = write_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        // dropped without commit: the temporary file goes
        let t = AtomicTarget::new(&d.join("never.txt")).unwrap();
        drop(t);
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut left = left;
        left.sort();
        #[cfg(unix)]
        assert_eq!(left, ["link.txt", "real.txt"]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
