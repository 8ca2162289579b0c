//! The `post_transform` attribute shared by the linear, SVM and tree
//! operators: what is applied to a row of scores before they are output.

use crate::ops::Attrs;
use crate::ops::KernelError;

/// How a row of scores is transformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostTransform {
    None,
    Softmax,
    Logistic,
    /// Softmax in which a score of exactly 0 stays 0.
    SoftmaxZero,
    Probit,
}

impl PostTransform {
    /// Decodes the `post_transform` attribute (default `NONE`).
    pub fn decode(attrs: &Attrs) -> Result<PostTransform, KernelError> {
        let s = attrs
            .string_checked("post_transform")?
            .unwrap_or_else(|| "NONE".to_string());
        Ok(match s.as_str() {
            "NONE" => PostTransform::None,
            "SOFTMAX" => PostTransform::Softmax,
            "LOGISTIC" => PostTransform::Logistic,
            "SOFTMAX_ZERO" => PostTransform::SoftmaxZero,
            "PROBIT" => PostTransform::Probit,
            other => {
                return Err(KernelError::new(format!(
                    "attribute 'post_transform' must be NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT, got '{other}'"
                )))
            }
        })
    }

    /// Applies the transform to one row of scores in place.
    pub fn apply(self, row: &mut [f64]) {
        match self {
            PostTransform::None => {}
            PostTransform::Logistic => row.iter_mut().for_each(|v| *v = logistic(*v)),
            PostTransform::Probit => row.iter_mut().for_each(|v| *v = probit(*v)),
            PostTransform::Softmax => softmax(row, false),
            PostTransform::SoftmaxZero => softmax(row, true),
        }
    }
}

/// `1 / (1 + e^-x)`, computed without overflow for large `|x|`.
pub fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The probit function: `sqrt(2) * erfinv(2p - 1)`, the inverse of the
/// standard normal distribution function.
pub fn probit(p: f64) -> f64 {
    std::f64::consts::SQRT_2 * erf_inv(2.0 * p - 1.0)
}

fn softmax(row: &mut [f64], keep_zero: bool) {
    let max = row
        .iter()
        .filter(|v| !(keep_zero && **v == 0.0))
        .fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    let mut sum = 0.0;
    for v in row.iter_mut() {
        if keep_zero && *v == 0.0 {
            continue;
        }
        *v = (*v - max).exp();
        sum += *v;
    }
    if sum > 0.0 {
        for v in row.iter_mut() {
            *v /= sum;
        }
    }
}

/// The inverse error function on (-1, 1): Giles' single-precision
/// approximation refined by two Newton steps on `erf`, so it is accurate to
/// double precision; ±1 give ±infinity.
pub fn erf_inv(x: f64) -> f64 {
    if x <= -1.0 {
        return if x == -1.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    if x >= 1.0 {
        return if x == 1.0 { f64::INFINITY } else { f64::NAN };
    }
    let w = -((1.0 - x) * (1.0 + x)).ln();
    let mut y = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p * x
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257;
        for c in [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p * x
    };
    for _ in 0..2 {
        let err = erf(y) - x;
        y -= err / (2.0 / std::f64::consts::PI.sqrt() * (-y * y).exp());
    }
    y
}

/// The error function, accurate to about 1e-15 (series for small `|x|`,
/// continued fraction of `erfc` beyond).
pub fn erf(x: f64) -> f64 {
    if x < 0.0 {
        return -erf(-x);
    }
    if x < 2.5 {
        // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
        let mut term = x;
        let mut sum = x;
        let x2 = x * x;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        2.0 / std::f64::consts::PI.sqrt() * sum
    } else {
        // erfc(x) by Lentz's continued fraction.
        let tiny = 1e-300;
        let mut f = x;
        let mut c = x;
        let mut d = 0.0;
        for k in 1..200 {
            let a = k as f64 / 2.0;
            d = x + a * d;
            d = if d == 0.0 { tiny } else { 1.0 / d };
            c = x + a / c;
            if c == 0.0 {
                c = tiny;
            }
            let delta = c * d;
            f *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        let erfc = (-x * x).exp() / f / std::f64::consts::PI.sqrt();
        1.0 - erfc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_sums_to_one_and_softmax_zero_keeps_zeros() {
        let mut r = vec![1.0, 2.0, 3.0];
        PostTransform::Softmax.apply(&mut r);
        assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((r[2] - 0.665_240_955_774_821_6).abs() < 1e-12);
        let mut z = vec![0.0, 1.0, 1.0];
        PostTransform::SoftmaxZero.apply(&mut z);
        assert_eq!(z, vec![0.0, 0.5, 0.5]);
    }

    #[test]
    fn logistic_and_probit_match_known_values() {
        assert_eq!(logistic(0.0), 0.5);
        assert!((logistic(-800.0)).abs() < 1e-300);
        assert!((logistic(2.0) - 0.880_797_077_977_882_3).abs() < 1e-15);
        assert_eq!(probit(0.5), 0.0);
        // the standard normal's 97.5% quantile
        assert!((probit(0.975) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-15);
        assert!((erf(3.0) - 0.999_977_909_503_001_4).abs() < 1e-15);
    }
}
