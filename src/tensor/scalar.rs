//! One tensor element in its own type, for event logs and exports: integers
//! stay exact (an int64 past 2^53 is not rounded through f64), floats
//! print in the shortest form that reads back to the same value of their
//! own width (`1.7` for a float32 1.7, not `1.7000000476837158`).

use super::Tensor;
use half::{bf16, f16};
use serde::{Serialize, Serializer};

/// A tensor element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    UInt(u64),
    Bool(bool),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
}

impl Scalar {
    /// The value as f64 (exact for every float type and for integers up
    /// to 2^53).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Int(v) => v as f64,
            Scalar::UInt(v) => v as f64,
            Scalar::Bool(v) => v as u8 as f64,
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::F32(v) => v as f64,
            Scalar::F64(v) => v,
        }
    }

    fn is_float(self) -> bool {
        matches!(
            self,
            Scalar::F16(_) | Scalar::BF16(_) | Scalar::F32(_) | Scalar::F64(_)
        )
    }

    /// The shortest text that reads back to the same value in its own
    /// type: `9007199254740993`, `1.7`, `0.1` (float16), `true`, `nan`.
    pub fn exact_text(self) -> String {
        match self {
            Scalar::Int(v) => v.to_string(),
            Scalar::UInt(v) => v.to_string(),
            Scalar::Bool(v) => v.to_string(),
            Scalar::F32(v) => float_text(v as f64, &format!("{v:?}")),
            Scalar::F64(v) => float_text(v, &format!("{v:?}")),
            Scalar::F16(v) => {
                float_text(v.to_f64(), &shortest(v.to_f64(), |x| f16::from_f64(x) == v))
            }
            Scalar::BF16(v) => float_text(
                v.to_f64(),
                &shortest(v.to_f64(), |x| bf16::from_f64(x) == v),
            ),
        }
    }

    /// The text of the value in a table: integers whole, booleans
    /// `True`/`False` (as numpy prints them), floats at `precision`.
    pub fn table_text(self, precision: usize) -> String {
        match self {
            Scalar::Bool(v) => if v { "True" } else { "False" }.to_string(),
            s if s.is_float() => super::format_scalar(s.to_f64(), precision),
            s => s.exact_text(),
        }
    }
}

/// `nan`/`inf`/`-inf` for non-finite values, else `debug` (Rust's `{:?}`
/// of a float is its shortest round-trip form, with `.0` kept).
fn float_text(v: f64, debug: &str) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        debug.to_string()
    }
}

/// The fewest significant digits of `v` that `same` accepts.
fn shortest(v: f64, same: impl Fn(f64) -> bool) -> String {
    for digits in 1..17 {
        let s = format!("{:.*e}", digits - 1, v);
        if s.parse::<f64>().is_ok_and(&same) {
            // back to plain notation through f64's own shortest form
            return format!("{:?}", s.parse::<f64>().unwrap_or(v));
        }
    }
    format!("{v:?}")
}

impl Serialize for Scalar {
    /// Integers and booleans as JSON integers, floats as their shortest
    /// round-trip number; NaN and infinities as the strings `"nan"`,
    /// `"inf"`, `"-inf"` (JSON has no such numbers).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::Int(v) => s.serialize_i64(v),
            Scalar::UInt(v) => s.serialize_u64(v),
            Scalar::Bool(v) => s.serialize_u8(v as u8),
            f => {
                let v = f.to_f64();
                if !v.is_finite() {
                    return s.serialize_str(&float_text(v, ""));
                }
                match f {
                    Scalar::F64(x) => s.serialize_f64(x),
                    // the shortest decimal of the narrower value, as an f64
                    // (JSON values built in memory hold every number as f64)
                    other => s.serialize_f64(other.exact_text().parse().unwrap_or(v)),
                }
            }
        }
    }
}

impl Tensor {
    /// The first `n` elements in their own type (`None` for strings).
    pub fn head_scalars(&self, n: usize) -> Option<Vec<Scalar>> {
        fn take<T: Copy>(a: &ndarray::ArrayD<T>, n: usize, f: impl Fn(T) -> Scalar) -> Vec<Scalar> {
            a.iter().take(n).map(|&v| f(v)).collect()
        }
        Some(match self {
            Tensor::Str(_) => return None,
            Tensor::F32(a) => take(a, n, Scalar::F32),
            Tensor::F64(a) => take(a, n, Scalar::F64),
            Tensor::F16(a) => take(a, n, Scalar::F16),
            Tensor::BF16(a) => take(a, n, Scalar::BF16),
            Tensor::I8(a) => take(a, n, |v| Scalar::Int(v as i64)),
            Tensor::I16(a) => take(a, n, |v| Scalar::Int(v as i64)),
            Tensor::I32(a) => take(a, n, |v| Scalar::Int(v as i64)),
            Tensor::I64(a) => take(a, n, Scalar::Int),
            Tensor::U8(a) => take(a, n, |v| Scalar::UInt(v as u64)),
            Tensor::U16(a) => take(a, n, |v| Scalar::UInt(v as u64)),
            Tensor::U32(a) => take(a, n, |v| Scalar::UInt(v as u64)),
            Tensor::U64(a) => take(a, n, Scalar::UInt),
            Tensor::Bool(a) => take(a, n, Scalar::Bool),
            Tensor::Small { dtype, data } => {
                // decoded through the type's own rules; sub-byte integers
                // are exact in i64, 8-bit floats in f32
                let k = data.len().min(n);
                let codes = data.iter().take(k).copied().collect();
                let head = Tensor::Small {
                    dtype: *dtype,
                    data: ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[k]), codes).ok()?,
                };
                if dtype.is_float() {
                    let v = head.to_f64_vec()?;
                    v.into_iter().map(|v| Scalar::F32(v as f32)).collect()
                } else {
                    head.to_i64_vec()
                        .ok()?
                        .into_iter()
                        .map(Scalar::Int)
                        .collect()
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_prints_exactly_and_shortest() {
        assert_eq!(
            Scalar::Int(9007199254740993).exact_text(),
            "9007199254740993"
        );
        assert_eq!(Scalar::UInt(u64::MAX).exact_text(), "18446744073709551615");
        assert_eq!(Scalar::F32(1.7).exact_text(), "1.7");
        assert_eq!(
            Scalar::F64(1.7f32 as f64).exact_text(),
            "1.7000000476837158"
        );
        assert_eq!(Scalar::F16(f16::from_f32(0.1)).exact_text(), "0.1");
        assert_eq!(Scalar::BF16(bf16::from_f32(1.23)).exact_text(), "1.23");
        assert_eq!(Scalar::F32(f32::NAN).exact_text(), "nan");
        assert_eq!(Scalar::Bool(true).table_text(4), "True");
        assert_eq!(Scalar::Int(-1).table_text(4), "-1");
        assert_eq!(Scalar::F32(2.0).table_text(4), "2.");
    }

    #[test]
    fn json_keeps_integers_and_float_widths() {
        let v = vec![
            Scalar::Int(i64::MAX),
            Scalar::F32(1.7),
            Scalar::Bool(true),
            Scalar::F16(f16::from_f32(0.1)),
            Scalar::F64(f64::INFINITY),
        ];
        let want = r#"[9223372036854775807,1.7,1,0.1,"inf"]"#;
        assert_eq!(serde_json::to_string(&v).unwrap(), want);
        // also through an in-memory JSON value
        assert_eq!(serde_json::json!(v).to_string(), want);
    }

    #[test]
    fn every_float16_reads_back_from_its_text() {
        for bits in 0..=u16::MAX {
            let v = f16::from_bits(bits);
            if v.is_finite() {
                let t = Scalar::F16(v).exact_text();
                assert_eq!(f16::from_f64(t.parse().unwrap()), v, "{t}");
            }
        }
    }
}
