//! A float32 exponential and logarithm the compiler can vectorise, and
//! the sigmoid, tanh, erf and Gelu built on the exponential.
//!
//! `f32::exp` is a call into libm per element; these functions have no
//! branches and no calls, so a loop over a slice becomes SIMD code. The
//! exponential reduces `x = n ln2 + r` with `|r| <= ln2 / 2` (ln2 split in
//! two parts, Cody-Waite), evaluates a degree-7 Taylor polynomial of `e^r`
//! (truncation error under 7e-9 relative), and scales by `2^n` as two
//! powers of two, so results down into the subnormal range come out right.
//! Measured worst relative error against the f64 exponential, over
//! [-87, 88]: under 3 float32 ulps (see the tests).

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 in two parts: the high part has trailing zero bits, so `n * LN2_HI`
/// is exact for the `n` that occur.
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;
/// 1.5 * 2^23: adding it rounds a float32 of magnitude below 2^22 to an
/// integer (in the default rounding mode, to nearest even).
const ROUNDER: f32 = 12_582_912.0;
/// Above this, e^x overflows float32.
const MAX_ARG: f32 = 88.722_83;
/// Below this, e^x rounds to zero in float32.
const MIN_ARG: f32 = -103.972_08;

/// The reduction both [`exp`] and [`tanh`] start from: x = n ln2 + r with
/// |r| <= ln2 / 2, returned as n's integer and e^r - 1, computed as r times
/// a degree-6 Taylor polynomial of (e^r - 1) / r (first omitted term under
/// 2e-8 relative). |x| must be below 2^22.
#[inline(always)]
fn split_ln2_expm1(x: f32) -> (i32, f32) {
    // round to nearest by adding and removing 1.5 * 2^23: no call to
    // `rintf`, which baseline x86-64 lacks as an instruction and which
    // would stop vectorisation
    let n = (x * LOG2E + ROUNDER) - ROUNDER;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let q = 1.0 / 5040.0;
    let q = q * r + 1.0 / 720.0;
    let q = q * r + 1.0 / 120.0;
    let q = q * r + 1.0 / 24.0;
    let q = q * r + 1.0 / 6.0;
    let q = q * r + 0.5;
    let q = q * r + 1.0;
    // n's integer read from the low bits of n + 1.5 * 2^23 (exact, as |n|
    // is far below 2^22): `n as i32` saturates and maps NaN to 0, which
    // compiles to scalar code per lane and stops vectorisation
    let ni = ((n + ROUNDER).to_bits() as i32).wrapping_sub(ROUNDER.to_bits() as i32);
    (ni, r * q)
}

/// e^x in float32 (NaN gives NaN, +inf gives +inf, -inf gives 0).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let xc = x.clamp(MIN_ARG, MAX_ARG);
    let (ni, em1_r) = split_ln2_expm1(xc);
    let p = em1_r + 1.0;
    // 2^n as 2^n1 * 2^n2, each a normal float32 for n in [-150, 128]
    let n1 = ni >> 1;
    let n2 = ni - n1;
    let s1 = f32::from_bits(((n1 + 127) as u32) << 23);
    let s2 = f32::from_bits(((n2 + 127) as u32) << 23);
    let y = p * s1 * s2;
    if x > MAX_ARG {
        f32::INFINITY
    } else if x < MIN_ARG {
        0.0
    } else {
        y
    }
}

/// The bit pattern of sqrt(1/2) in float32: `ln` splits x = 2^e * m with
/// m in [sqrt(1/2), sqrt(2)).
const FRAC_1_SQRT_2_BITS: u32 = 0x3f35_04f3;

/// ln x in float32 (0 gives -inf, a negative x or NaN gives NaN, +inf
/// gives +inf). x = 2^e * m with m in [sqrt(1/2), sqrt(2)) read from the
/// bits (subnormals scaled by 2^23 first), f = m - 1 (exact). ln(1 + f) is
/// 2 atanh(s) with s = f / (2 + f), |s| <= 0.172, written as
/// f - (f^2/2 - s (f^2/2 + R(s^2))): the exact f leads and the rounding
/// errors fall on the small correction (2 atanh(s) = 2s + s R(s^2) with R
/// the series 2z/3 + 2z^2/5 + ... to z^4, first omitted term under 5e-9
/// relative); e ln 2 is added in two parts.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let bits = xs.to_bits();
    let e = (bits.wrapping_sub(FRAC_1_SQRT_2_BITS) as i32) >> 23;
    let m = f32::from_bits(bits.wrapping_sub((e as u32) << 23));
    let ef = e as f32 - if tiny { 23.0 } else { 0.0 };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = 2.0 / 9.0;
    let r = r * z + 2.0 / 7.0;
    let r = r * z + 2.0 / 5.0;
    let r = r * z + 2.0 / 3.0;
    let r = r * z;
    let hfsq = 0.5 * f * f;
    let y = ef * LN2_HI + (f - (hfsq - (s * (hfsq + r) + ef * LN2_LO)));
    if x == f32::INFINITY {
        x
    } else if x == 0.0 {
        f32::NEG_INFINITY
    } else if x > 0.0 {
        y
    } else {
        f32::NAN
    }
}

/// 1 / (1 + e^-x), from e^-|x| only (never overflows; no cancellation for
/// large negative x, where the result is e^x / (1 + e^x)).
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    let d = 1.0 + e;
    if x >= 0.0 {
        1.0 / d
    } else {
        e / d
    }
}

/// Above this |x|, tanh(x) rounds to +-1 in float32 (1 - tanh(9.5) is
/// about 1.1e-8, under half an ulp below 1).
const TANH_MAX: f32 = 9.5;

/// tanh in float32 from one e^(2|x|) - 1, with no branch and no
/// cancellation: `em1 / (em1 + 2)`, signed, where em1 = 2^n (e^r - 1) +
/// (2^n - 1) from [`split_ln2_expm1`] of 2|x| is exact to a few ulps also
/// for small x, where 1 - 2 / (e^(2|x|) + 1) would cancel. Measured worst relative error against the f64 tanh: 2.1e-7
/// (see the tests). tanh(-0) is -0 and NaN stays NaN.
#[inline(always)]
pub fn tanh(v: f32) -> f32 {
    // a comparison, not `f32::min`, which would turn NaN into TANH_MAX
    let a = v.abs();
    let a = if a > TANH_MAX { TANH_MAX } else { a };
    let (ni, em1_r) = split_ln2_expm1(a + a);
    // n is at most 28 here, so 2^n is one normal float32
    let s = f32::from_bits(((ni + 127) as u32) << 23);
    let em1 = s * em1_r + (s - 1.0);
    (em1 / (em1 + 2.0)).copysign(v)
}

/// erfc(z) for z >= 0 in float32: `t * e^(-z^2 + P(t))` with
/// t = 1 / (1 + z/2) and P a degree-9 Chebyshev fit, whose relative error
/// is below 1.2e-7 for every z >= 0 (so the tail keeps its precision where
/// 1 - erf(z) would cancel).
#[inline(always)]
#[allow(clippy::excessive_precision)] // the fit's coefficients as published
fn erfc_nonneg(z: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let p = 0.170_872_77;
    let p = p * t - 0.822_152_23;
    let p = p * t + 1.488_515_87;
    let p = p * t - 1.135_203_98;
    let p = p * t + 0.278_868_07;
    let p = p * t - 0.186_288_06;
    let p = p * t + 0.096_784_18;
    let p = p * t + 0.374_091_96;
    let p = p * t + 1.000_023_68;
    let p = p * t - 1.265_512_23;
    t * exp(p - z * z)
}

/// The error function in float32: an odd Taylor polynomial below
/// |x| = 0.5 (first omitted term under 3e-8 relative there), otherwise
/// `1 - erfc(|x|)`, signed. erf(-0) is -0 and NaN stays NaN.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let x2 = x * x;
    // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
    let p = -1.0 / 1320.0;
    let p = p * x2 + 1.0 / 216.0;
    let p = p * x2 - 1.0 / 42.0;
    let p = p * x2 + 1.0 / 10.0;
    let p = p * x2 - 1.0 / 3.0;
    let p = p * x2 + 1.0;
    let small = std::f32::consts::FRAC_2_SQRT_PI * x * p;
    let big = (1.0 - erfc_nonneg(a)).copysign(x);
    if a < 0.5 {
        small
    } else {
        big
    }
}

/// Gelu (exact form) in float32: `x/2 * (1 + erf(x/sqrt 2))`, where
/// `1 + erf(x/sqrt 2)` is `erfc(|x|/sqrt 2)` for negative x (no
/// cancellation in the left tail) and `2 - erfc(x/sqrt 2)` otherwise.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    let c = erfc_nonneg(x.abs() * std::f32::consts::FRAC_1_SQRT_2);
    let one_plus_erf = if x >= 0.0 { 2.0 - c } else { c };
    0.5 * x * one_plus_erf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if w == 0.0 || !w.is_finite() {
            return if got == w { 0.0 } else { f64::INFINITY };
        }
        let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64;
        (got as f64 - want).abs() / ulp
    }

    #[test]
    fn exp_is_within_three_ulps_and_handles_the_edges() {
        let mut worst = 0f64;
        let mut i = -87_000;
        while i <= 88_000 {
            let x = i as f32 / 1000.0 + 0.000_37;
            worst = worst.max(ulps(exp(x), (x as f64).exp()));
            i += 7;
        }
        assert!(worst <= 3.0, "worst {worst} ulps");
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-110.0), 0.0);
        assert!(exp(f32::NAN).is_nan());
        // subnormal results
        let sub = exp(-100.0) as f64;
        assert!((sub - (-100f64).exp()).abs() <= 2e-45, "{sub}");
        // the largest finite results
        let big = exp(88.7) as f64;
        assert!((big / (88.7f32 as f64).exp() - 1.0).abs() < 1e-6, "{big}");
    }

    #[test]
    fn ln_is_within_one_ulp_and_handles_the_edges() {
        let mut worst = 0f64;
        // every binade from the subnormals to the largest floats, and a
        // dense sweep around 1 where ln x is small
        let mut x = 1e-44f32;
        while x < 3e38 {
            worst = worst.max(ulps(ln(x), (x as f64).ln()));
            // among the subnormals a relative step can round back to x
            let next = x * 1.000_73;
            x = if next > x {
                next
            } else {
                f32::from_bits(x.to_bits() + 1)
            };
        }
        for i in 1..200_000 {
            let x = 0.9 + i as f32 * 1e-6;
            if x != 1.0 {
                worst = worst.max(ulps(ln(x), (x as f64).ln()));
            }
        }
        assert!(worst <= 1.0, "worst {worst} ulps");
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(ln(0.0), f32::NEG_INFINITY);
        assert_eq!(ln(-0.0), f32::NEG_INFINITY);
        assert_eq!(ln(f32::INFINITY), f32::INFINITY);
        assert!(ln(-1.0).is_nan() && ln(f32::NAN).is_nan() && ln(f32::NEG_INFINITY).is_nan());
        assert_eq!(ln(f32::MAX), (f32::MAX as f64).ln() as f32);
    }

    #[test]
    fn sigmoid_and_tanh_match_f64() {
        let mut worst_s = 0f64;
        let mut worst_t = 0f64;
        for i in -20_000..=20_000 {
            let x = i as f32 / 1000.0;
            let xs = x as f64;
            let s = 1.0 / (1.0 + (-xs).exp());
            worst_s = worst_s.max(((sigmoid(x) as f64 - s) / s).abs());
            let t = xs.tanh();
            if t != 0.0 {
                worst_t = worst_t.max(((tanh(x) as f64 - t) / t).abs());
            }
        }
        // tiny arguments, down through the subnormals, keep their relative
        // precision (tanh x ~ x)
        let mut x = 1e-38f32;
        while x < 20.0 {
            let t = (x as f64).tanh();
            worst_t = worst_t.max(((tanh(x) as f64 - t) / t).abs());
            worst_t = worst_t.max(((tanh(-x) as f64 + t) / t).abs());
            x *= 1.000_3;
        }
        for bits in [1u32, 7, 0x7f_ffff] {
            let x = f32::from_bits(bits);
            assert_eq!(tanh(x), x, "subnormal {x:e}");
        }
        assert!(worst_s < 1e-6, "sigmoid {worst_s}");
        assert!(worst_t < 4e-7, "tanh {worst_t}");
        assert_eq!(tanh(9.5), 1.0);
        assert_eq!(tanh(-30.0), -1.0);
        assert!(tanh(-0.0).is_sign_negative());
        assert_eq!(tanh(1e-30), 1e-30);
        assert!(tanh(f32::NAN).is_nan() && sigmoid(f32::NAN).is_nan());
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0);
        assert_eq!(sigmoid(f32::INFINITY), 1.0);
        // tiny results keep their relative precision
        let s = sigmoid(-80.0) as f64;
        assert!((s / (-80f64).exp() - 1.0).abs() < 1e-6, "{s}");
    }

    #[test]
    fn erf_matches_f64() {
        let reference = super::super::scalar_math::erf;
        let mut worst = 0f64;
        for i in -6_000..=6_000 {
            let x = i as f32 / 1000.0 + 0.000_3;
            let want = reference(x as f64);
            worst = worst.max(((erf(x) as f64 - want) / want).abs());
        }
        assert!(worst < 3e-7, "erf worst relative error {worst}");
        // either side of the switch at 0.5
        for x in [0.499_999_97f32, 0.5, -0.5, 1e-20, -1e-30] {
            let want = reference(x as f64);
            assert!(((erf(x) as f64 - want) / want).abs() < 3e-7, "x {x}");
        }
        assert!(erf(-0.0).is_sign_negative() && erf(-0.0) == 0.0);
        assert_eq!(erf(f32::INFINITY), 1.0);
        assert_eq!(erf(f32::NEG_INFINITY), -1.0);
        assert_eq!(erf(20.0), 1.0);
        assert!(erf(f32::NAN).is_nan());
    }

    #[test]
    fn gelu_matches_f64_in_relative_error_down_the_left_tail() {
        // the f64 reference 1 + erf(x/sqrt 2) cancels below x = -6
        let erf = super::super::scalar_math::erf;
        let mut worst = 0f64;
        for i in -6_000..=14_000 {
            let x = i as f32 / 1000.0;
            let xs = x as f64;
            let want = 0.5 * xs * (1.0 + erf(xs / std::f64::consts::SQRT_2));
            if want != 0.0 && want.abs() > 1e-30 {
                worst = worst.max(((gelu(x) as f64 - want) / want).abs());
            }
        }
        assert!(worst < 1e-5, "gelu worst relative error {worst}");
        assert_eq!(gelu(0.0), 0.0);
        assert_eq!(gelu(f32::INFINITY), f32::INFINITY);
        assert_eq!(gelu(-30.0), 0.0);
        // further down the tail: x/2 * erfc(|x|/sqrt 2) ~ -phi(x), the
        // normal density, within 1 / x^2
        for x in [-7.0f32, -9.0, -12.0] {
            let xs = x as f64;
            let phi = (-0.5 * xs * xs).exp() / (2.0 * std::f64::consts::PI).sqrt();
            let r = gelu(x) as f64 / -phi;
            assert!((r - 1.0).abs() < 1.2 / (xs * xs), "x {x}: ratio {r}");
        }
        assert!(gelu(f32::NAN).is_nan());
    }
}
