//! What Cast, CastLike and the quantizers share: conversion of a tensor's
//! values to any element type (with the encoders of the small float types,
//! float8 and float4, and of the sub-byte integers), and the propagation of
//! known values through a cast.

use super::value_rules::truth;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{KernelError, NodeInfo};
use crate::ops::kernels::array;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::{DataType, Tensor};
use half::{bf16, f16};
use ndarray::ArrayD;
use std::sync::OnceLock;

/// The elements of a tensor, in a form every conversion can start from.
enum Vals {
    F(Vec<f64>),
    I(Vec<i128>),
    B(Vec<bool>),
    S(Vec<String>),
}

fn decode(t: &Tensor) -> Vals {
    fn ints<T: Copy + Into<i128>>(a: &ArrayD<T>) -> Vals {
        Vals::I(a.iter().map(|&v| v.into()).collect())
    }
    match t {
        Tensor::I8(a) => ints(a),
        Tensor::I16(a) => ints(a),
        Tensor::I32(a) => ints(a),
        Tensor::I64(a) => ints(a),
        Tensor::U8(a) => ints(a),
        Tensor::U16(a) => ints(a),
        Tensor::U32(a) => ints(a),
        Tensor::U64(a) => ints(a),
        Tensor::Bool(a) => Vals::B(a.iter().copied().collect()),
        Tensor::Str(a) => Vals::S(a.iter().cloned().collect()),
        Tensor::Small { dtype, .. } if dtype.is_int() => Vals::I(
            t.to_f64_vec()
                .unwrap_or_default()
                .into_iter()
                .map(|v| v as i128)
                .collect(),
        ),
        _ => Vals::F(t.to_f64_vec().unwrap_or_default()),
    }
}

/// Parses a string as a number: integers exactly, floats with the special
/// literals INF, +INF, -INF, NaN (any case).
fn parse_num(s: &str) -> Result<f64, KernelError> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => return Ok(f64::INFINITY),
        "-inf" | "-infinity" => return Ok(f64::NEG_INFINITY),
        "nan" | "+nan" | "-nan" => return Ok(f64::NAN),
        _ => {}
    }
    t.parse::<f64>()
        .map_err(|_| KernelError::new(format!("Cast: '{s}' is not a number")))
}

fn vals_f64(v: &Vals) -> Result<Vec<f64>, KernelError> {
    Ok(match v {
        Vals::F(f) => f.clone(),
        Vals::I(i) => i.iter().map(|&x| x as f64).collect(),
        Vals::B(b) => b.iter().map(|&x| if x { 1.0 } else { 0.0 }).collect(),
        Vals::S(s) => s.iter().map(|x| parse_num(x)).collect::<Result<_, _>>()?,
    })
}

/// Integer values: floats truncate toward zero (NaN → 0, saturating at the
/// i128 range), strings parse.
fn vals_int(v: &Vals) -> Result<Vec<i128>, KernelError> {
    Ok(match v {
        Vals::I(i) => i.clone(),
        Vals::F(f) => f.iter().map(|&x| x as i128).collect(),
        Vals::B(b) => b.iter().map(|&x| x as i128).collect(),
        Vals::S(s) => s
            .iter()
            .map(|x| match x.trim().parse::<i128>() {
                Ok(v) => Ok(v),
                Err(_) => parse_num(x).map(|f| f as i128),
            })
            .collect::<Result<_, _>>()?,
    })
}

fn format_float(v: f64, single: bool) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "INF" } else { "-INF" }.into()
    } else if single {
        format!("{}", v as f32)
    } else {
        format!("{v}")
    }
}

/// How a small float type encodes its values.
pub(super) struct MiniSpec {
    sign: u8,
    nan: Option<u8>,
    inf: Option<u8>,
    neg_zero: bool,
    /// Non-negative finite values with their codes, ascending.
    table: Vec<(f64, u8)>,
}

pub(super) fn mini_spec(dt: DataType) -> Option<&'static MiniSpec> {
    static SPECS: OnceLock<Vec<(DataType, MiniSpec)>> = OnceLock::new();
    let specs = SPECS.get_or_init(|| {
        let make = |dt: DataType, sign: u8, nan: Option<u8>, inf: Option<u8>, neg_zero: bool| {
            let codes: Vec<u8> = (0..sign).collect();
            let t = Tensor::Small {
                dtype: dt,
                data: ArrayD::from_shape_vec(ndarray::IxDyn(&[codes.len()]), codes.clone())
                    .unwrap_or_else(|_| ArrayD::zeros(ndarray::IxDyn(&[0]))),
            };
            let vals = t.to_f64_vec().unwrap_or_default();
            let mut table: Vec<(f64, u8)> = vals
                .into_iter()
                .zip(codes)
                .filter(|(v, _)| v.is_finite())
                .collect();
            table.sort_by(|a, b| a.0.total_cmp(&b.0));
            (
                dt,
                MiniSpec {
                    sign,
                    nan,
                    inf,
                    neg_zero,
                    table,
                },
            )
        };
        vec![
            make(DataType::Float8E4M3FN, 0x80, Some(0x7f), None, true),
            make(DataType::Float8E4M3FNUZ, 0x80, Some(0x80), None, false),
            make(DataType::Float8E5M2, 0x80, Some(0x7f), Some(0x7c), true),
            make(DataType::Float8E5M2FNUZ, 0x80, Some(0x80), None, false),
            make(DataType::Float4E2M1, 0x08, None, None, true),
        ]
    });
    specs.iter().find(|(d, _)| *d == dt).map(|(_, s)| s)
}

/// Encodes `v` in a float8 / float4 type with round-to-nearest-even;
/// out-of-range values saturate to ±max or become inf/NaN.
pub fn encode_minifloat(dt: DataType, v: f64, saturate: bool) -> Option<u8> {
    let s = mini_spec(dt)?;
    let (max_v, max_c) = *s.table.last()?;
    let neg = v.is_sign_negative();
    let sign_of = |c: u8| -> u8 {
        if neg && (c != 0 || s.neg_zero) {
            c | s.sign
        } else {
            c
        }
    };
    let overflow = |neg: bool| -> u8 {
        if saturate {
            return sign_of(max_c);
        }
        match (s.inf, s.nan) {
            (Some(i), _) => {
                if neg {
                    i | s.sign
                } else {
                    i
                }
            }
            (None, Some(n)) => {
                if neg && s.neg_zero {
                    n | s.sign
                } else {
                    n
                }
            }
            (None, None) => sign_of(max_c),
        }
    };
    if v.is_nan() {
        return Some(match s.nan {
            Some(n) => n,
            // no NaN code (float4e2m1): NaN becomes the sign bit alone (-0)
            None => s.sign,
        });
    }
    let a = v.abs();
    if a.is_infinite() {
        return Some(overflow(neg));
    }
    let n = s.table.len();
    let i = s.table.partition_point(|(x, _)| *x < a);
    if i == n {
        // above the largest value: it rounds to max when nearer to max than
        // to the next (virtual) step
        let prev = if n >= 2 { s.table[n - 2].0 } else { 0.0 };
        let next = max_v + (max_v - prev);
        let mid = (max_v + next) / 2.0;
        if saturate || a < mid || (a == mid && max_c % 2 == 0) {
            return Some(sign_of(max_c));
        }
        return Some(overflow(neg));
    }
    let (hi_v, hi_c) = s.table[i];
    if hi_v == a || i == 0 {
        return Some(sign_of(hi_c));
    }
    let (lo_v, lo_c) = s.table[i - 1];
    let c = if a - lo_v < hi_v - a {
        lo_c
    } else if a - lo_v > hi_v - a {
        hi_c
    } else if lo_c % 2 == 0 {
        lo_c
    } else {
        hi_c
    };
    Some(sign_of(c))
}

/// Encodes `v` as float8e8m0 (a power of two, 2^(c-127); 0xff is NaN).
pub fn encode_e8m0(v: f64, saturate: bool, mode: &str) -> u8 {
    if v.is_nan() {
        return 0xff;
    }
    if v.is_infinite() {
        return if saturate { 0xfe } else { 0xff };
    }
    if v <= 0.0 {
        return if saturate { 0 } else { 0xff };
    }
    let bits = v.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (e, frac_nonzero, frac_half) = if exp_bits == 0 {
        // f64 subnormal: far below the e8m0 range
        (-1100, true, false)
    } else {
        (exp_bits - 1023, frac != 0, frac >= 1u64 << 51)
    };
    let e = match mode {
        "down" => e,
        "nearest" => {
            if frac_half {
                e + 1
            } else {
                e
            }
        }
        _ => {
            if frac_nonzero {
                e + 1
            } else {
                e
            }
        }
    };
    let c = e + 127;
    if c > 254 {
        if saturate {
            0xfe
        } else {
            0xff
        }
    } else if c < 0 {
        if saturate {
            0
        } else {
            0xff
        }
    } else {
        c as u8
    }
}

/// The range of a sub-byte integer type.
fn sub_int_range(dt: DataType) -> Option<(i128, i128)> {
    Some(match dt {
        DataType::Int4 => (-8, 7),
        DataType::Uint4 => (0, 15),
        DataType::Int2 => (-2, 1),
        DataType::Uint2 => (0, 3),
        _ => return None,
    })
}

/// Options of a conversion to a small float type.
#[derive(Clone, Debug)]
pub struct CastOpts {
    pub saturate: bool,
    pub round_mode: String,
}

pub(super) fn small(dt: DataType, shape: &[usize], codes: Vec<u8>) -> Result<Tensor, KernelError> {
    Ok(Tensor::Small {
        dtype: dt,
        data: array(shape, codes)?,
    })
}

/// The conversions real models run (between float32, float16, float64,
/// int32 and int64), element by element from a standard-layout tensor
/// without the f64 / i128 copies of the general path, giving the same
/// values it does (floats to integers truncate toward zero, NaN gives 0,
/// and beyond the target's range they go through i128 as there). `None`
/// for any other pair or layout.
fn cast_direct(t: &Tensor, to: DataType) -> Option<Tensor> {
    macro_rules! map {
        ($a:expr, $var:ident, $f:expr) => {{
            let s = $a.as_slice()?;
            Tensor::$var(ArrayD::from_shape_vec($a.raw_dim(), s.iter().map($f).collect()).ok()?)
        }};
    }
    Some(match (t, to) {
        (Tensor::F32(a), DataType::Float16) => {
            use half::slice::HalfFloatSliceExt;
            let s = a.as_slice()?;
            let mut out = vec![f16::ZERO; s.len()];
            out.convert_from_f32_slice(s);
            Tensor::F16(ArrayD::from_shape_vec(a.raw_dim(), out).ok()?)
        }
        (Tensor::F16(a), DataType::Float) => {
            use half::slice::HalfFloatSliceExt;
            let s = a.as_slice()?;
            let mut out = vec![0f32; s.len()];
            s.convert_to_f32_slice(&mut out);
            Tensor::F32(ArrayD::from_shape_vec(a.raw_dim(), out).ok()?)
        }
        (Tensor::F32(a), DataType::Int64) => map!(a, I64, |&x| if x.abs() < 9.2e18 {
            x as i64
        } else {
            x as i128 as i64
        }),
        (Tensor::F32(a), DataType::Int32) => map!(a, I32, |&x| if x.abs() < 2.1e9 {
            x as i32
        } else {
            x as i128 as i32
        }),
        (Tensor::F32(a), DataType::Double) => map!(a, F64, |&x| x as f64),
        (Tensor::F64(a), DataType::Float) => map!(a, F32, |&x| x as f32),
        (Tensor::I64(a), DataType::Float) => map!(a, F32, |&x| x as f32),
        (Tensor::I32(a), DataType::Float) => map!(a, F32, |&x| x as f32),
        (Tensor::I64(a), DataType::Int32) => map!(a, I32, |&x| x as i32),
        (Tensor::I32(a), DataType::Int64) => map!(a, I64, |&x| x as i64),
        _ => return None,
    })
}

/// Converts a tensor to another element type.
pub fn cast_tensor(t: &Tensor, to: DataType, opts: &CastOpts) -> Result<Tensor, KernelError> {
    if t.dtype() == to {
        return Ok(t.clone());
    }
    if let Some(out) = cast_direct(t, to) {
        return Ok(out);
    }
    cast_general(t, to, opts)
}

/// Any conversion, through f64, i128, bool or string values.
fn cast_general(t: &Tensor, to: DataType, opts: &CastOpts) -> Result<Tensor, KernelError> {
    let shape = t.shape();
    let src = decode(t);
    // Numbers to strings keep the precision of their source type.
    if to == DataType::String {
        let single = matches!(
            t.dtype(),
            DataType::Float | DataType::Float16 | DataType::Bfloat16
        ) || t.dtype().is_float8()
            || t.dtype() == DataType::Float4E2M1;
        let out: Vec<String> = match &src {
            Vals::F(f) => f.iter().map(|&v| format_float(v, single)).collect(),
            Vals::I(i) => i.iter().map(|v| v.to_string()).collect(),
            Vals::B(b) => b
                .iter()
                .map(|&v| if v { "True" } else { "False" }.to_string())
                .collect(),
            Vals::S(s) => s.clone(),
        };
        return Ok(Tensor::Str(array(shape, out)?));
    }
    if to == DataType::Bool {
        let out: Vec<bool> = match &src {
            Vals::F(f) => f.iter().map(|&v| v != 0.0).collect(),
            Vals::I(i) => i.iter().map(|&v| v != 0).collect(),
            Vals::B(b) => b.clone(),
            Vals::S(_) => vals_f64(&src)?.iter().map(|&v| v != 0.0).collect(),
        };
        return Ok(Tensor::Bool(array(shape, out)?));
    }
    macro_rules! ints {
        ($t:ty, $var:ident) => {{
            let v = vals_int(&src)?;
            Tensor::$var(array(shape, v.into_iter().map(|x| x as $t).collect())?)
        }};
    }
    macro_rules! floats {
        ($var:ident, $conv:expr) => {{
            let v = vals_f64(&src)?;
            Tensor::$var(array(shape, v.into_iter().map($conv).collect())?)
        }};
    }
    Ok(match to {
        DataType::Float => match &src {
            // i128 → f32 directly, to round once
            Vals::I(i) => Tensor::F32(array(shape, i.iter().map(|&x| x as f32).collect())?),
            _ => floats!(F32, |x| x as f32),
        },
        DataType::Double => floats!(F64, |x| x),
        DataType::Float16 => floats!(F16, f16::from_f64),
        DataType::Bfloat16 => floats!(BF16, bf16::from_f64),
        DataType::Int8 => ints!(i8, I8),
        DataType::Int16 => ints!(i16, I16),
        DataType::Int32 => ints!(i32, I32),
        DataType::Int64 => ints!(i64, I64),
        DataType::Uint8 => ints!(u8, U8),
        DataType::Uint16 => ints!(u16, U16),
        DataType::Uint32 => ints!(u32, U32),
        DataType::Uint64 => ints!(u64, U64),
        DataType::Float8E4M3FN
        | DataType::Float8E4M3FNUZ
        | DataType::Float8E5M2
        | DataType::Float8E5M2FNUZ
        | DataType::Float4E2M1 => {
            let v = vals_f64(&src)?;
            let codes = v
                .iter()
                .map(|&x| encode_minifloat(to, x, opts.saturate).unwrap_or(0))
                .collect();
            small(to, shape, codes)?
        }
        DataType::Float8E8M0 => {
            let v = vals_f64(&src)?;
            let codes = v
                .iter()
                .map(|&x| encode_e8m0(x, opts.saturate, &opts.round_mode))
                .collect();
            small(to, shape, codes)?
        }
        DataType::Int4 | DataType::Uint4 | DataType::Int2 | DataType::Uint2 => {
            let bits = if matches!(to, DataType::Int4 | DataType::Uint4) {
                4
            } else {
                2
            };
            let mask = (1u8 << bits) - 1;
            let codes: Vec<u8> = match &src {
                // floats truncate toward zero; out of range (undefined
                // by the spec) gives 0, as the reference does
                Vals::F(f) => {
                    let (lo, hi) = sub_int_range(to).unwrap_or((0, 0));
                    f.iter()
                        .map(|&x| {
                            let r = x.trunc();
                            let r = if r.is_nan() || r < lo as f64 || r > hi as f64 {
                                0
                            } else {
                                r as i128
                            };
                            (r as u8) & mask
                        })
                        .collect()
                }
                // integers keep their low bits
                _ => vals_int(&src)?
                    .into_iter()
                    .map(|x| (x as u8) & mask)
                    .collect(),
            };
            small(to, shape, codes)?
        }
        other => bail!("Cast to {other} is not supported"),
    })
}

pub(super) fn cast_opts(info: &NodeInfo) -> CastOpts {
    CastOpts {
        saturate: info.attrs.int_or("saturate", 1) != 0,
        round_mode: info.attrs.string_or("round_mode", "up"),
    }
}

pub(super) fn dtype_of_code(code: i64, what: &str) -> Result<DataType, ShapeError> {
    i32::try_from(code)
        .ok()
        .and_then(DataType::from_code)
        .filter(|d| *d != DataType::Undefined)
        .ok_or_else(|| ShapeError::new(format!("{what} = {code} is not a data type")))
}

/// The value of a Cast: integers stay integers; a float target keeps
/// them while it holds them exactly; a float source holds integers only
/// (see [`SymValue`]), which every integer type takes unchanged.
pub(super) fn cast_known_value(cx: &mut InferCtx, to: DataType) {
    let Some(v) = cx.value(0).cloned() else {
        return;
    };
    let Some(from) = cx.elem(0) else {
        return;
    };
    let intish = |d: DataType| d.is_int() || d == DataType::Bool;
    if intish(to) && (intish(from) || from.is_float()) {
        cast_value(cx, v, to);
    } else if to.is_float() && v.fits_float(to) && (intish(from) || from.is_float()) {
        cx.set_value(0, v);
    }
}

/// Sets a cast integer value: bool targets keep known truth values only.
fn cast_value(cx: &mut InferCtx, v: SymValue, to: DataType) {
    if to == DataType::Bool {
        let values: Option<Vec<Expr>> = v
            .values
            .iter()
            .map(|e| e.as_int().map(|x| truth(x != 0)))
            .collect();
        if let Some(values) = values {
            cx.set_value(
                0,
                SymValue {
                    shape: v.shape,
                    values,
                },
            );
        }
    } else {
        cx.set_value(0, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_casts_give_what_the_general_path_gives() {
        let f: Vec<f32> = vec![
            0.0,
            -0.0,
            1.5,
            -2.5,
            2.7,
            -2.7,
            65504.0,
            65520.0,
            1e-8,
            6e-5,
            3e9,
            -3e9,
            1e19,
            -1e19,
            1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            16_777_217.0,
            0.1,
        ];
        let i: Vec<i64> = vec![
            0,
            -1,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
            16_777_217,
            3,
        ];
        let sources = [
            Tensor::from_vec(&[4, 5], f.clone()).unwrap(),
            Tensor::from_vec(&[20], f.iter().map(|&v| v as f64).collect()).unwrap(),
            Tensor::from_vec(&[20], f.iter().map(|&v| f16::from_f32(v)).collect()).unwrap(),
            Tensor::from_vec(&[2, 4], i.clone()).unwrap(),
            Tensor::from_vec(&[8], i.iter().map(|&v| v as i32).collect()).unwrap(),
        ];
        let opts = CastOpts {
            saturate: true,
            round_mode: "up".into(),
        };
        let mut direct = 0;
        for src in &sources {
            for to in [
                DataType::Float,
                DataType::Float16,
                DataType::Double,
                DataType::Int32,
                DataType::Int64,
            ] {
                let Some(fast) = cast_direct(src, to) else {
                    continue;
                };
                direct += 1;
                let slow = cast_general(src, to, &opts).unwrap();
                assert_eq!(fast.shape(), slow.shape());
                let (a, b) = (fast.to_f64_vec().unwrap(), slow.to_f64_vec().unwrap());
                for (x, y) in a.iter().zip(&b) {
                    assert!(
                        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                        "{:?} -> {to:?}: {a:?} against {b:?}",
                        src.dtype()
                    );
                }
            }
        }
        assert_eq!(direct, 10, "every direct pair is checked");
    }

    fn back(dt: DataType, c: u8) -> f64 {
        Tensor::Small {
            dtype: dt,
            data: ArrayD::from_elem(ndarray::IxDyn(&[]), c),
        }
        .to_f64_vec()
        .unwrap()[0]
    }

    #[test]
    fn e4m3fn_rounding_and_saturation() {
        let dt = DataType::Float8E4M3FN;
        assert_eq!(encode_minifloat(dt, 1.0, true), Some(0x38));
        assert_eq!(back(dt, encode_minifloat(dt, 1e6, true).unwrap()), 448.0);
        assert!(back(dt, encode_minifloat(dt, 1e6, false).unwrap()).is_nan());
        assert_eq!(back(dt, encode_minifloat(dt, -1e6, true).unwrap()), -448.0);
        // 1.0625 lies halfway between 1.0 (even code) and 1.125
        assert_eq!(back(dt, encode_minifloat(dt, 1.0625, true).unwrap()), 1.0);
        // 1.1875 lies halfway between 1.125 and 1.25 (even code)
        assert_eq!(back(dt, encode_minifloat(dt, 1.1875, true).unwrap()), 1.25);
        assert!(back(dt, encode_minifloat(dt, f64::NAN, true).unwrap()).is_nan());
    }

    #[test]
    fn e5m2_overflow_gives_infinity_without_saturation() {
        let dt = DataType::Float8E5M2;
        assert_eq!(
            back(dt, encode_minifloat(dt, f64::INFINITY, false).unwrap()),
            f64::INFINITY
        );
        assert_eq!(
            back(dt, encode_minifloat(dt, f64::INFINITY, true).unwrap()),
            57344.0
        );
        assert_eq!(
            back(dt, encode_minifloat(dt, -1e9, false).unwrap()),
            f64::NEG_INFINITY
        );
    }

    #[test]
    fn e8m0_rounding_modes() {
        assert_eq!(encode_e8m0(1.0, true, "up"), 127);
        assert_eq!(encode_e8m0(3.0, true, "up"), 129);
        assert_eq!(encode_e8m0(3.0, true, "down"), 128);
        assert_eq!(encode_e8m0(3.0, true, "nearest"), 129);
        assert_eq!(encode_e8m0(2.9, true, "nearest"), 128);
        assert_eq!(encode_e8m0(0.0, false, "up"), 0xff);
    }

    #[test]
    fn int_to_int_casts_wrap() {
        let t = Tensor::from_vec(&[2], vec![200i16, -1]).unwrap();
        let opts = CastOpts {
            saturate: true,
            round_mode: "up".into(),
        };
        let y = cast_tensor(&t, DataType::Int8, &opts).unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), vec![-56, -1]);
        let s = cast_tensor(
            &Tensor::from_vec(&[2], vec!["-inf".to_string(), "1e2".into()]).unwrap(),
            DataType::Float,
            &opts,
        )
        .unwrap();
        assert_eq!(s.to_f64_vec().unwrap(), vec![f64::NEG_INFINITY, 100.0]);
    }
}
