//! One memory budget for every allocation whose size comes from data.
//!
//! A model from the internet can ask for any shape: an Expand to
//! `[2^32, 2^32]`, a MatMul with billions of outputs, a Loop whose scan
//! output grows without end. Allocating such a size aborts the process (the
//! allocator cannot return an error through `Vec`), so every allocation
//! sized from data asks [`check`] first: element counts and bytes are
//! computed with checked arithmetic and compared with what is left of the
//! budget (`config max-memory`, by default half of the physical memory).
//!
//! What is left is the limit minus the bytes the process has on the heap
//! right now, counted by [`CountingAlloc`], the library's global allocator.
//! The count is exact (every allocation and free goes through it) and costs
//! one relaxed atomic add per call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The system allocator, counting the bytes in use.
pub struct CountingAlloc;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
/// Set by the first allocation through [`CountingAlloc`]: it is the global
/// allocator, so buffers adopted by [`super::mapped`] are freed correctly.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether [`CountingAlloc`] is the process's allocator.
pub fn counting() -> bool {
    ACTIVE.load(Ordering::Relaxed) || {
        // one allocation tells
        drop(std::hint::black_box(Box::new(0u64)));
        ACTIVE.load(Ordering::Relaxed)
    }
}

// SAFETY: every call is forwarded unchanged to `System`, except the free or
// resize of a buffer adopted by `super::mapped` (never allocated by
// `System`), which goes back to its owner; a counter is updated beside.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !ACTIVE.load(Ordering::Relaxed) {
            ACTIVE.store(true, Ordering::Relaxed);
        }
        let p = System.alloc(layout);
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if super::mapped::release(ptr).is_some() {
            return;
        }
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if super::mapped::is_adopted(ptr) {
            // an adopted buffer moves to the heap: copy, then let it go
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                super::mapped::release(ptr);
            }
            return new;
        }
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                IN_USE.fetch_add(new_size - layout.size(), Ordering::Relaxed);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Bytes on the heap now.
pub fn in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

/// 0 = the default.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// The physical memory of the machine, in bytes (0 if it cannot be read).
pub fn physical_memory() -> usize {
    static PHYS: OnceLock<usize> = OnceLock::new();
    *PHYS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let (pages, size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages <= 0 || size <= 0 {
            0
        } else {
            (pages as usize).saturating_mul(size as usize)
        }
    })
}

/// The default budget: half of the physical memory (8 GiB when unknown).
pub fn default_limit() -> usize {
    match physical_memory() {
        0 => 8 << 30,
        p => p / 2,
    }
}

/// The budget in bytes.
pub fn limit() -> usize {
    match LIMIT.load(Ordering::Relaxed) {
        0 => default_limit(),
        n => n,
    }
}

/// Sets the budget; `None` restores the default.
pub fn set_limit(bytes: Option<usize>) {
    LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// An allocation the budget refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverBudget {
    /// The shape asked for (empty when only a byte count was asked).
    pub shape: Vec<usize>,
    /// The bytes asked for; `None` when they do not even fit a 64-bit count.
    pub bytes: Option<usize>,
    pub limit: usize,
    pub in_use: usize,
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.shape.is_empty() {
            String::new()
        } else {
            format!("shape {:?} ", self.shape)
        };
        match self.bytes {
            None => write!(f, "{what}has more bytes than 2^64: refused"),
            Some(b) => write!(
                f,
                "{what}needs {}, over the memory budget ({} with {} in use; `config max-memory` sets it)",
                human(b),
                human(self.limit),
                human(self.in_use)
            ),
        }
    }
}

impl std::error::Error for OverBudget {}

/// Checks that `shape` of `elem_bytes`-byte elements fits what is left of
/// the budget; returns its element count.
pub fn check(shape: &[usize], elem_bytes: usize) -> Result<usize, OverBudget> {
    let over = |bytes| OverBudget {
        shape: shape.to_vec(),
        bytes,
        limit: limit(),
        in_use: in_use(),
    };
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| over(None))?;
    let bytes = n.checked_mul(elem_bytes.max(1)).ok_or_else(|| over(None))?;
    if bytes > limit().saturating_sub(in_use()) {
        return Err(over(Some(bytes)));
    }
    Ok(n)
}

/// Checks several buffers a kernel holds at once (its output and its
/// scratch), each a shape, a byte width per element and a count of copies
/// (one per worker thread for per-thread scratch): their sum must fit what
/// is left. Returns the total bytes.
pub fn check_together(parts: &[(&[usize], usize, usize)]) -> Result<usize, OverBudget> {
    let mut total = 0usize;
    for &(shape, elem_bytes, copies) in parts {
        let n = check(shape, elem_bytes)?;
        let bytes = n
            .checked_mul(elem_bytes.max(1))
            .and_then(|b| b.checked_mul(copies))
            .and_then(|b| b.checked_add(total));
        total = bytes.ok_or_else(|| OverBudget {
            shape: shape.to_vec(),
            bytes: None,
            limit: limit(),
            in_use: in_use(),
        })?;
    }
    check_bytes(total)?;
    Ok(total)
}

/// Checks a byte count against what is left of the budget.
pub fn check_bytes(bytes: usize) -> Result<(), OverBudget> {
    if bytes > limit().saturating_sub(in_use()) {
        return Err(OverBudget {
            shape: Vec::new(),
            bytes: Some(bytes),
            limit: limit(),
            in_use: in_use(),
        });
    }
    Ok(())
}

/// The heap has grown past the budget (an allocation that was not checked
/// beforehand, or many small ones): the error to stop with.
pub fn exceeded() -> Option<OverBudget> {
    let used = in_use();
    let lim = limit();
    (used > lim).then(|| OverBudget {
        shape: Vec::new(),
        bytes: Some(used),
        limit: lim,
        in_use: used,
    })
}

/// Bytes in a short human form: `512 B`, `1.5 KiB`, `3.0 GiB`.
pub fn human(bytes: usize) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses a byte count: `1048576`, `512K`, `512M`, `4G`, `1.5G`, `2T`
/// (binary units, an optional `B`/`iB` suffix, any case).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, mult): (&str, f64) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1024.0),
        Some('m') => (&body[..body.len() - 1], 1024.0 * 1024.0),
        Some('g') => (&body[..body.len() - 1], 1024.0 * 1024.0 * 1024.0),
        Some('t') => (&body[..body.len() - 1], 1024.0f64.powi(4)),
        _ => (body, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{t}' is not a size (e.g. 512M, 4G, 1073741824)"))?;
    let bytes = v * mult;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= usize::MAX as f64 {
        return Err(format!("'{t}' is not a usable size"));
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_wrap_and_overflow_are_refused() {
        let e = check(&[3, 6148914691236517206], 4).unwrap_err();
        assert_eq!(e.bytes, None);
        assert!(e.to_string().contains("2^64"), "{e}");
        let e = check(&[1 << 32, 1 << 32], 1).unwrap_err();
        assert_eq!(e.bytes, None);
    }

    #[test]
    fn over_the_limit_is_refused_with_the_sizes() {
        let e = check(&[1 << 20, 1 << 20], 4).unwrap_err();
        assert_eq!(e.bytes, Some(4 << 40));
        let msg = e.to_string();
        assert!(msg.contains("4.0 TiB"), "{msg}");
        assert!(msg.contains("max-memory"), "{msg}");
        assert_eq!(check(&[2, 3], 4), Ok(6));
        assert_eq!(check(&[0, usize::MAX], 4), Ok(0));
    }

    #[test]
    fn buffers_held_together_are_summed() {
        // 2^61 elements of 8 bytes pass 2^64 bytes: no byte count at all
        let big = [1usize << 31, 1 << 30];
        assert_eq!(check_together(&[(&big, 8, 4)]).unwrap_err().bytes, None);
        // small parts add up exactly
        assert_eq!(
            check_together(&[(&[10], 8, 1), (&[3, 2], 4, 2)]),
            Ok(80 + 48)
        );
    }

    #[test]
    fn the_allocator_counts() {
        let v: Vec<u8> = Vec::with_capacity(64 << 20);
        // other tests allocate and free concurrently: only a lower bound holds
        assert!(in_use() >= 64 << 20);
        drop(v);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("4g"), Ok(4 << 30));
        assert_eq!(parse_bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("-1G").is_err());
        assert!(parse_bytes("0").is_err());
        assert_eq!(human(1536), "1.5 KiB");
    }
}
