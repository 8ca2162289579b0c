//! Scalar functions in f64 that several kernels share: the error function
//! (to double and to single accuracy), the logistic sigmoid and softplus.

/// The error function, accurate to about 1e-15 (series near zero,
/// continued fraction for the tail).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 3.0 {
        // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
        let x2 = a * a;
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() && n < 200.0 {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else if a > 27.0 {
        1.0
    } else {
        // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
        let mut f = a;
        for k in (1..=60).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// The error function to float32 accuracy (relative error about 1e-7), for
/// float32/float16/bfloat16 tensors: a short Taylor series below 0.5, and
/// above it the Chebyshev-fitted `erfc` of Numerical Recipes (`erfcc`,
/// fractional error below 1.2e-7), one `exp` per element where [`erf`]'s
/// series takes dozens of terms.
pub fn erf_single(x: f64) -> f64 {
    let z = x.abs();
    if z.is_nan() {
        return x;
    }
    if z < 0.5 {
        // erf(x) = 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
        let x2 = x * x;
        let p = 1.0
            + x2 * (-1.0 / 3.0
                + x2 * (1.0 / 10.0 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 - x2 / 1320.0))));
        return std::f64::consts::FRAC_2_SQRT_PI * x * p;
    }
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = 1.0 - t * poly.exp();
    if x < 0.0 {
        -r
    } else {
        r
    }
}

pub fn sigmoid(v: f64) -> f64 {
    if v >= 0.0 {
        1.0 / (1.0 + (-v).exp())
    } else {
        let e = v.exp();
        e / (1.0 + e)
    }
}

pub fn softplus(v: f64) -> f64 {
    if v > 0.0 {
        v + (-v).exp().ln_1p()
    } else {
        v.exp().ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_single_agrees_with_erf_to_float32_accuracy() {
        let mut worst = 0f64;
        for i in -6000..=6000 {
            let x = i as f64 / 1000.0;
            let (a, b) = (erf_single(x), erf(x));
            let rel = if b == 0.0 {
                a.abs()
            } else {
                ((a - b) / b).abs()
            };
            worst = worst.max(rel);
        }
        assert!(worst < 2e-7, "worst relative error {worst}");
        assert!(erf_single(f64::NAN).is_nan());
        assert_eq!(erf_single(40.0), 1.0);
        assert!((erf_single(1e-8) / 1e-8 - std::f64::consts::FRAC_2_SQRT_PI).abs() < 1e-12);
    }

    #[test]
    fn erf_matches_known_values() {
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(-2.0) + 0.995_322_265_018_952_7).abs() < 1e-14);
        assert!((erf(3.5) - 0.999_999_256_901_627_7).abs() < 1e-14);
        assert!((erf(1e-5) / 1e-5 - std::f64::consts::FRAC_2_SQRT_PI).abs() < 1e-9);
    }
}
