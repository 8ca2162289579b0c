//! Zero-copy weights: a tensor whose buffer is the loaded bytes themselves.
//!
//! A weight read from a model (or from its external data file) is a slice of
//! the loaded file: a memory mapping for big files, a heap buffer for small
//! ones. Copying it into an owned array doubles its cost in memory and time,
//! so [`adopt`] instead builds a `Vec<T>` that points straight into those
//! bytes. `ndarray` arrays own a `Vec`, so every kernel reads such a weight
//! in place, unchanged.
//!
//! The `Vec` was not allocated by the heap, so its buffer must never reach
//! the system allocator. The library's global allocator
//! ([`super::budget::CountingAlloc`]) asks [`release`] first on every free
//! and reallocation: a buffer adopted here is taken out of the table and the
//! bytes' owner (a `bytes::Bytes`, which keeps the mapping or buffer alive)
//! is dropped instead. The table is a fixed array with open addressing
//! behind a spin lock, so the allocator never allocates while it holds it.
//!
//! What is adopted is read-only: kernels read their inputs and write fresh
//! outputs, and a clone of an adopted array is an ordinary heap array.
//! Adopted bytes are not heap bytes: they are counted apart
//! ([`mapped_bytes`]), not against the memory budget.

use bytes::Bytes;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Weights smaller than this are copied: a table slot and a page shared
/// with the model's other bytes are not worth saving a few bytes.
pub const MIN_BYTES: usize = 1 << 16;

/// Table size (a power of two). At most half of it is filled; weights past
/// that are copied as before.
const SLOTS: usize = 1 << 15;
const MASK: usize = SLOTS - 1;

struct Table {
    /// Buffer address, 0 for a free slot.
    keys: [usize; SLOTS],
    /// The owner of the bytes (a leaked `Box<Bytes>`) and their length.
    owners: [(*mut Bytes, usize); SLOTS],
    used: usize,
}

struct Locked(UnsafeCell<Table>);

// SAFETY: the table is only touched while `LOCK` is held.
unsafe impl Sync for Locked {}

static TABLE: Locked = Locked(UnsafeCell::new(Table {
    keys: [0; SLOTS],
    owners: [(std::ptr::null_mut(), 0); SLOTS],
    used: 0,
}));
static LOCK: AtomicBool = AtomicBool::new(false);
/// How many buffers are adopted now (0: the allocator skips the lookup).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The lowest and highest adopted addresses ever seen: a cheap filter
/// before the lookup.
static LOW: AtomicUsize = AtomicUsize::new(usize::MAX);
static HIGH: AtomicUsize = AtomicUsize::new(0);
/// Bytes adopted now.
static BYTES: AtomicUsize = AtomicUsize::new(0);

struct Guard;

fn lock() -> Guard {
    while LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
    }
    Guard
}

impl Drop for Guard {
    fn drop(&mut self) {
        LOCK.store(false, Ordering::Release);
    }
}

fn home(key: usize) -> usize {
    // Fibonacci hashing of the address (low bits are alignment zeros)
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) & MASK
}

impl Table {
    fn insert(&mut self, key: usize, owner: *mut Bytes, len: usize) -> bool {
        if self.used >= SLOTS / 2 {
            return false;
        }
        let mut i = home(key);
        while self.keys[i] != 0 {
            i = (i + 1) & MASK;
        }
        self.keys[i] = key;
        self.owners[i] = (owner, len);
        self.used += 1;
        true
    }

    fn find(&self, key: usize) -> Option<usize> {
        let mut i = home(key);
        while self.keys[i] != 0 {
            if self.keys[i] == key {
                return Some(i);
            }
            i = (i + 1) & MASK;
        }
        None
    }

    /// Removes slot `i`, shifting later entries of its probe run back.
    fn remove(&mut self, mut i: usize) -> (*mut Bytes, usize) {
        let out = self.owners[i];
        let mut j = i;
        loop {
            j = (j + 1) & MASK;
            let k = self.keys[j];
            if k == 0 {
                break;
            }
            let h = home(k);
            // the entry at j may stay when its home lies cyclically in (i, j]
            let stays = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !stays {
                self.keys[i] = k;
                self.owners[i] = self.owners[j];
                i = j;
            }
        }
        self.keys[i] = 0;
        self.owners[i] = (std::ptr::null_mut(), 0);
        self.used -= 1;
        out
    }
}

/// Element types whose every bit pattern is a valid value, stored
/// little-endian like ONNX raw data.
///
/// # Safety
/// Implementors must be plain numbers with no invalid bit patterns.
pub unsafe trait Plain: Copy {}
// SAFETY: plain numbers, any bits are a value
unsafe impl Plain for f32 {}
unsafe impl Plain for f64 {}
unsafe impl Plain for half::f16 {}
unsafe impl Plain for half::bf16 {}
unsafe impl Plain for i8 {}
unsafe impl Plain for i16 {}
unsafe impl Plain for i32 {}
unsafe impl Plain for i64 {}
unsafe impl Plain for u8 {}
unsafe impl Plain for u16 {}
unsafe impl Plain for u32 {}
unsafe impl Plain for u64 {}

/// A `Vec<T>` over `bytes` itself, when it can be one: the machine is
/// little-endian, `bytes` holds whole elements, starts on `T`'s alignment,
/// is at least [`MIN_BYTES`] long, and the table has room. `None` means:
/// copy instead.
pub fn adopt<T: Plain>(bytes: &Bytes) -> Option<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let len = bytes.len();
    let ptr = bytes.as_ptr();
    if cfg!(target_endian = "big")
        || !super::budget::counting()
        || size == 0
        || len < MIN_BYTES
        || !len.is_multiple_of(size)
        || !(ptr as usize).is_multiple_of(std::mem::align_of::<T>())
    {
        return None;
    }
    let owner = Box::into_raw(Box::new(bytes.clone()));
    let inserted = {
        let _g = lock();
        // SAFETY: the lock is held
        unsafe { (*TABLE.0.get()).insert(ptr as usize, owner, len) }
    };
    if !inserted {
        // SAFETY: `owner` came from Box::into_raw above and was not stored
        drop(unsafe { Box::from_raw(owner) });
        return None;
    }
    LOW.fetch_min(ptr as usize, Ordering::Relaxed);
    HIGH.fetch_max(ptr as usize, Ordering::Relaxed);
    BYTES.fetch_add(len, Ordering::Relaxed);
    LIVE.fetch_add(1, Ordering::Release);
    // SAFETY: `ptr` is aligned for T and points at `len / size` initialised
    // elements (any bits are a value of a `Plain` T) that stay alive and
    // unmoved while the table holds their owner. The buffer is never
    // handed to the system allocator: the global allocator sends its free
    // (and any reallocation) to `release`.
    Some(unsafe { Vec::from_raw_parts(ptr as *mut T, len / size, len / size) })
}

/// Called by the global allocator for every buffer it frees or resizes:
/// when `ptr` was adopted, forgets it, drops its owner and returns its
/// length; otherwise returns `None` and the allocator proceeds.
pub(super) fn release(ptr: *mut u8) -> Option<usize> {
    if LIVE.load(Ordering::Acquire) == 0 {
        return None;
    }
    let p = ptr as usize;
    if p < LOW.load(Ordering::Relaxed) || p > HIGH.load(Ordering::Relaxed) {
        return None;
    }
    let (owner, len) = {
        let _g = lock();
        // SAFETY: the lock is held
        let t = unsafe { &mut *TABLE.0.get() };
        let i = t.find(p)?;
        t.remove(i)
    };
    LIVE.fetch_sub(1, Ordering::Release);
    BYTES.fetch_sub(len, Ordering::Relaxed);
    // dropped outside the lock: the owner's drop may free heap memory (and
    // unmap a file), which comes back through the allocator
    // SAFETY: `owner` came from Box::into_raw in `adopt` and the table held
    // the only copy of it
    drop(unsafe { Box::from_raw(owner) });
    Some(len)
}

/// Whether `ptr` is the start of an adopted buffer.
pub fn is_adopted(ptr: *const u8) -> bool {
    let p = ptr as usize;
    if LIVE.load(Ordering::Acquire) == 0
        || p < LOW.load(Ordering::Relaxed)
        || p > HIGH.load(Ordering::Relaxed)
    {
        return false;
    }
    let _g = lock();
    // SAFETY: the lock is held
    unsafe { (*TABLE.0.get()).find(p).is_some() }
}

/// Bytes of loaded files that tensors use in place now.
pub fn mapped_bytes() -> usize {
    BYTES.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(n: usize) -> Bytes {
        let v: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        Bytes::from(v)
    }

    #[test]
    fn an_adopted_vector_reads_the_bytes_and_frees_through_its_owner() {
        let b = bytes_of(MIN_BYTES * 2);
        let v: Vec<u32> = adopt(&b).expect("aligned heap bytes are adopted");
        assert_eq!(v.as_ptr() as usize, b.as_ptr() as usize);
        assert!(is_adopted(v.as_ptr() as *const u8));
        assert_eq!(
            v[1],
            u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            "reads in place"
        );
        let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[v.len()]), v).unwrap();
        let copy = a.clone();
        assert!(!is_adopted(copy.as_ptr() as *const u8));
        let ptr = a.as_ptr() as *const u8;
        drop(a);
        assert!(!is_adopted(ptr));
        drop(b);
        assert_eq!(copy[[2]], u32::from_le_bytes([8, 9, 10, 11]));
    }

    #[test]
    fn misaligned_short_or_ragged_bytes_are_copied() {
        let b = bytes_of(MIN_BYTES * 2 + 8);
        assert!(adopt::<f32>(&b.slice(1..MIN_BYTES + 1)).is_none());
        assert!(adopt::<f32>(&b.slice(0..MIN_BYTES - 4)).is_none());
        assert!(adopt::<f64>(&b.slice(0..MIN_BYTES + 4)).is_none());
    }

    #[test]
    fn growing_an_adopted_vector_moves_it_to_the_heap() {
        let b = bytes_of(MIN_BYTES);
        let mut v: Vec<u8> = adopt(&b).unwrap();
        let first = v[0];
        v.push(7);
        assert!(!is_adopted(b.as_ptr()));
        assert_eq!(v[0], first);
        assert_eq!(v.last(), Some(&7));
        assert_eq!(v.len(), MIN_BYTES + 1);
        // the original bytes are untouched
        assert_eq!(b.len(), MIN_BYTES);
    }

    #[test]
    fn many_vectors_share_the_table() {
        let b = bytes_of(MIN_BYTES * 64);
        let vs: Vec<Vec<u8>> = (0..64)
            .map(|i| adopt(&b.slice(i * MIN_BYTES..(i + 1) * MIN_BYTES)).unwrap())
            .collect();
        for (i, v) in vs.iter().enumerate() {
            assert_eq!(v.as_ptr(), b[i * MIN_BYTES..].as_ptr());
        }
        // drop in an order unlike insertion, exercising removal shifts
        let mut vs = vs;
        while !vs.is_empty() {
            let k = (vs.len() * 7 + 3) % vs.len();
            let v = vs.swap_remove(k);
            let p = v.as_ptr();
            drop(v);
            assert!(!is_adopted(p));
        }
    }
}
