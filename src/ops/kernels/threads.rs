//! How many threads a kernel may split its work over: the current rayon
//! pool's (`config threads N`), or one inside [`sequential`], which a Loop
//! uses once its iterations prove too short for a split to pay for waking
//! the other threads.

use std::cell::Cell;

thread_local! {
    static SEQUENTIAL: Cell<bool> = const { Cell::new(false) };
}

/// The threads a kernel called from this thread may use.
pub fn current() -> usize {
    if SEQUENTIAL.with(Cell::get) {
        1
    } else {
        rayon::current_num_threads()
    }
}

/// Runs `f` with [`current`] at one on this thread (restored afterwards,
/// also when `f` unwinds).
pub fn sequential<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SEQUENTIAL.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SEQUENTIAL.with(|s| s.replace(true)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_is_one_thread_and_nests() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            assert_eq!(current(), 2);
            sequential(|| {
                assert_eq!(current(), 1);
                sequential(|| assert_eq!(current(), 1));
                assert_eq!(current(), 1);
            });
            assert_eq!(current(), 2);
        });
    }
}
