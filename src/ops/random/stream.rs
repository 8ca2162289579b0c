//! The random streams: xorshift64* per node, seeded by the `seed`
//! attribute or by a counter that advances at every run.

use crate::ops::kernel::NodeInfo;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// xorshift64* — small, fast, and good enough for sampling.
pub(super) struct Stream(u64);

impl Stream {
    pub(super) fn new(seed: u64) -> Stream {
        Stream(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(super) fn uniform(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(super) fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(f64::MIN_POSITIVE);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// The stream of one node: the seed attribute, or a counter that advances
/// at every run.
pub(super) fn stream_of(info: &NodeInfo) -> impl Fn() -> Stream + Send + Sync {
    let seed = info.attrs.float("seed").map(|s| s.to_bits() as u64);
    let counter = Arc::new(AtomicU64::new(0x5EED));
    move || match seed {
        Some(s) => Stream::new(s),
        None => Stream::new(counter.fetch_add(1, Ordering::Relaxed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_streams_repeat_and_stay_in_range() {
        let mut a = Stream::new(7);
        let mut b = Stream::new(7);
        for _ in 0..100 {
            let (x, y) = (a.uniform(), b.uniform());
            assert_eq!(x, y);
            assert!((0.0..1.0).contains(&x));
        }
        let mean: f64 = (0..10000).map(|_| a.normal()).sum::<f64>() / 10000.0;
        assert!(mean.abs() < 0.05, "{mean}");
    }
}
