//! Summary statistics of a tensor (`print NAME --stats`): what to look at
//! first when a value goes wrong (range, mean, spread, NaN and infinity
//! counts), computed in one pass in f64.

use super::Tensor;

/// Statistics of the finite elements, with the non-finite ones counted.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    pub count: usize,
    /// `None` when no element is finite.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    /// Population standard deviation, as numpy's `std()`.
    pub std: Option<f64>,
    pub nan: usize,
    pub inf: usize,
}

impl Tensor {
    /// The statistics of a numeric or boolean tensor; `None` for strings.
    pub fn stats(&self) -> Option<Stats> {
        let v = self.to_f64_vec()?;
        let (mut n, mut mean, mut m2) = (0usize, 0.0f64, 0.0f64);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut nan, mut inf) = (0, 0);
        for x in v {
            if x.is_nan() {
                nan += 1;
            } else if x.is_infinite() {
                inf += 1;
            } else {
                // Welford: stable for large counts and large offsets
                n += 1;
                let d = x - mean;
                mean += d / n as f64;
                m2 += d * (x - mean);
                min = min.min(x);
                max = max.max(x);
            }
        }
        let some = |x: f64| (n > 0).then_some(x);
        Some(Stats {
            count: self.len(),
            min: some(min),
            max: some(max),
            mean: some(mean),
            std: some((m2 / n.max(1) as f64).sqrt()),
            nan,
            inf,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_skip_non_finite_values_and_count_them() {
        let t =
            Tensor::from_vec(&[6], vec![1.0f32, 2.0, 3.0, 4.0, f32::NAN, f32::INFINITY]).unwrap();
        let s = t.stats().unwrap();
        assert_eq!((s.count, s.nan, s.inf), (6, 1, 1));
        assert_eq!((s.min, s.max, s.mean), (Some(1.0), Some(4.0), Some(2.5)));
        assert!((s.std.unwrap() - 1.118_033_988_749_895).abs() < 1e-12);
        let empty = Tensor::from_vec::<f32>(&[0], vec![])
            .unwrap()
            .stats()
            .unwrap();
        assert_eq!((empty.min, empty.std), (None, None));
        assert!(Tensor::from_vec(&[1], vec!["a".to_string()])
            .unwrap()
            .stats()
            .is_none());
    }
}
