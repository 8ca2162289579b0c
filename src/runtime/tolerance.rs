//! How close a produced value must be to the expected one, and the
//! comparison itself: floats within a [`Tolerance`], other types exactly.
//! Used by the conformance runner ([`super::conformance`]), the check of
//! random draws ([`super::random_draws`]) and the shell's `compare`.

use crate::tensor::{render_tensor, Map, Tensor, Value};

pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

/// How close a float must be: `|got - want| <= atol + rtol * |want|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rtol: RTOL,
            atol: ATOL,
        }
    }
}

/// Compares a produced value with the expected one.
pub fn compare_values(got: &Value, want: &Value, tol: &Tolerance) -> Result<(), String> {
    match (got, want) {
        (Value::Tensor(g), Value::Tensor(w)) => compare_tensors(g, w, tol),
        (Value::Sequence { items: g, .. }, Value::Sequence { items: w, .. }) => {
            if g.len() != w.len() {
                return Err(format!(
                    "sequence of {} tensors, expected {}",
                    g.len(),
                    w.len()
                ));
            }
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                compare_tensors(a, b, tol).map_err(|e| format!("item {i}: {e}"))?;
            }
            Ok(())
        }
        (Value::Map(g), Value::Map(w)) => compare_maps(g, w, tol),
        (Value::MapSequence { items: g, .. }, Value::MapSequence { items: w, .. }) => {
            if g.len() != w.len() {
                return Err(format!(
                    "sequence of {} maps, expected {}",
                    g.len(),
                    w.len()
                ));
            }
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                compare_maps(a, b, tol).map_err(|e| format!("map {i}: {e}"))?;
            }
            Ok(())
        }
        (Value::Optional(g), Value::Optional(w)) => match (g, w) {
            (None, None) => Ok(()),
            (Some(a), Some(b)) => compare_values(a, b, tol),
            _ => Err(format!(
                "got {}, expected {}",
                got.describe(),
                want.describe()
            )),
        },
        (Value::Optional(Some(a)), b) | (b, Value::Optional(Some(a))) => compare_values(a, b, tol),
        _ => Err(format!(
            "got {}, expected {}",
            got.describe(),
            want.describe()
        )),
    }
}

/// Compares maps: the same keys in the same order, values within tolerance.
fn compare_maps(g: &Map, w: &Map, tol: &Tolerance) -> Result<(), String> {
    if g.keys() != w.keys() {
        return Err(format!(
            "keys {}, expected {}",
            render_tensor(g.keys(), 4),
            render_tensor(w.keys(), 4)
        ));
    }
    compare_tensors(g.values(), w.values(), tol).map_err(|e| format!("values: {e}"))
}

/// Compares tensors: type, shape, then values. A float mismatch reports
/// how many elements are out of tolerance, the first of them, and the
/// worst absolute and relative errors over the whole tensor.
pub fn compare_tensors(g: &Tensor, w: &Tensor, tol: &Tolerance) -> Result<(), String> {
    if g.dtype() != w.dtype() {
        return Err(format!("type {}, expected {}", g.dtype(), w.dtype()));
    }
    if g.shape() != w.shape() {
        return Err(format!("shape {:?}, expected {:?}", g.shape(), w.shape()));
    }
    if let (Tensor::Str(a), Tensor::Str(b)) = (g, w) {
        if let Some((i, (x, y))) = a
            .iter()
            .zip(b.iter())
            .enumerate()
            .find(|(_, (x, y))| x != y)
        {
            return Err(format!("element {i} is {x:?}, expected {y:?}"));
        }
        return Ok(());
    }
    let is_float = g.dtype().is_float();
    if !is_float {
        if let (Ok(a), Ok(b)) = (g.to_i64_vec(), w.to_i64_vec()) {
            if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                return Err(format!("element {i} is {}, expected {}", a[i], b[i]));
            }
            return Ok(());
        }
    }
    let a = g.to_f64_vec().unwrap_or_default();
    let b = w.to_f64_vec().unwrap_or_default();
    let mut first = None;
    let mut bad = 0usize;
    let mut worst_abs = (0.0f64, 0usize);
    let mut worst_rel = (0.0f64, 0usize);
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        let ok = if x.is_nan() || y.is_nan() {
            x.is_nan() && y.is_nan()
        } else if x.is_infinite() || y.is_infinite() {
            x == y
        } else if is_float {
            let d = (x - y).abs();
            if d > worst_abs.0 {
                worst_abs = (d, i);
            }
            if y != 0.0 && d / y.abs() > worst_rel.0 {
                worst_rel = (d / y.abs(), i);
            }
            d <= tol.atol + tol.rtol * y.abs()
        } else {
            x == y
        };
        if !ok {
            bad += 1;
            first.get_or_insert((i, x, y));
        }
    }
    let Some((i, x, y)) = first else {
        return Ok(());
    };
    if !is_float {
        return Err(format!("element {i} is {x}, expected {y}"));
    }
    // the scale of the expected values, computed only for the message
    let scale = b
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    Err(format!(
        "{bad} of {} elements out of tolerance (rtol {}, atol {}), first: element {i} is {x}, \
         expected {y}; worst absolute error {:.3e} (element {}; the largest expected magnitude is {:.3e}), \
         worst relative error {:.3e} (element {})",
        a.len(),
        tol.rtol,
        tol.atol,
        worst_abs.0,
        worst_abs.1,
        scale,
        worst_rel.0,
        worst_rel.1
    ))
}
