//! Comparing two runs of the same network (before and after an
//! optimisation or a conversion): which value of one run is which value of
//! the other, and how far apart they are.
//!
//! Values are matched by name first (same name, element type and shape).
//! A value left without a counterpart is then matched by position: between
//! the reference positions of its nearest name-matched neighbours (its
//! anchors), the first unmatched reference value with the same element
//! type and shape, in order, so the matching stays monotone.

use crate::tensor::{DataType, Tensor};
use std::collections::HashMap;

/// What matching needs to know about a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueMeta {
    pub name: String,
    pub dtype: DataType,
    pub shape: Vec<usize>,
}

impl ValueMeta {
    pub fn of(name: &str, t: &Tensor) -> ValueMeta {
        ValueMeta {
            name: name.to_string(),
            dtype: t.dtype(),
            shape: t.shape().to_vec(),
        }
    }

    fn same_kind(&self, o: &ValueMeta) -> bool {
        self.dtype == o.dtype && self.shape == o.shape
    }
}

/// For each value of `cur` (in topological order), the index of its
/// counterpart in `reference` (also in topological order), if any.
pub fn match_values(cur: &[ValueMeta], reference: &[ValueMeta]) -> Vec<Option<usize>> {
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(reference.len());
    for (j, r) in reference.iter().enumerate() {
        by_name.entry(r.name.as_str()).or_insert(j);
    }
    let mut used = vec![false; reference.len()];
    let mut m: Vec<Option<usize>> = cur
        .iter()
        .map(|c| {
            let j = *by_name.get(c.name.as_str())?;
            (c.same_kind(&reference[j]) && !used[j]).then(|| {
                used[j] = true;
                j
            })
        })
        .collect();
    // the next name-matched reference position after each value
    let mut next_anchor = vec![reference.len(); cur.len()];
    let mut next = reference.len();
    for i in (0..cur.len()).rev() {
        next_anchor[i] = next;
        if let Some(j) = m[i] {
            next = j;
        }
    }
    let mut lo: Option<usize> = None; // reference position of the last match
    for i in 0..cur.len() {
        if let Some(j) = m[i] {
            lo = Some(j);
            continue;
        }
        let start = lo.map_or(0, |j| j + 1);
        let hi = next_anchor[i];
        if start >= hi {
            continue;
        }
        if let Some(j) = (start..hi).find(|&j| !used[j] && reference[j].same_kind(&cur[i])) {
            used[j] = true;
            m[i] = Some(j);
            lo = Some(j);
        }
    }
    m
}

/// How far one tensor is from its reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diff {
    /// Largest |a - b| (infinite when a NaN or an infinity differs, or
    /// strings or other non-numbers differ).
    pub max_abs: f64,
    /// Largest |a - b| / |b| over the elements where b is not 0.
    pub max_rel: f64,
    /// Every element within `atol + rtol * |b|` (NaN equals NaN).
    pub ok: bool,
}

/// Compares `a` with its reference `b` (same shape; element types may
/// differ when both are numbers, e.g. after a conversion to float16).
pub fn diff(a: &Tensor, b: &Tensor, rtol: f64, atol: f64) -> Result<Diff, String> {
    if a.shape() != b.shape() {
        return Err(format!(
            "shape {:?} against the reference's {:?}",
            a.shape(),
            b.shape()
        ));
    }
    if let (Tensor::Str(x), Tensor::Str(y)) = (a, b) {
        let same = x.iter().zip(y.iter()).all(|(p, q)| p == q);
        return Ok(Diff {
            max_abs: if same { 0.0 } else { f64::INFINITY },
            max_rel: if same { 0.0 } else { f64::INFINITY },
            ok: same,
        });
    }
    // float32 against float32 (the common case) without copies
    if let (Tensor::F32(x), Tensor::F32(y)) = (a, b) {
        let pairs = x.iter().zip(y.iter()).map(|(&p, &q)| (p as f64, q as f64));
        return Ok(diff_pairs(pairs, rtol, atol));
    }
    let (Some(x), Some(y)) = (a.to_f64_vec(), b.to_f64_vec()) else {
        return Err(format!(
            "cannot compare {} with {} element by element",
            a.dtype(),
            b.dtype()
        ));
    };
    Ok(diff_pairs(x.into_iter().zip(y), rtol, atol))
}

fn diff_pairs(pairs: impl Iterator<Item = (f64, f64)>, rtol: f64, atol: f64) -> Diff {
    let mut d = Diff {
        max_abs: 0.0,
        max_rel: 0.0,
        ok: true,
    };
    for (p, q) in pairs {
        if p.is_nan() || q.is_nan() || p.is_infinite() || q.is_infinite() {
            let same = (p.is_nan() && q.is_nan()) || p == q;
            if !same {
                d.ok = false;
                d.max_abs = f64::INFINITY;
                d.max_rel = f64::INFINITY;
            }
            continue;
        }
        let e = (p - q).abs();
        d.max_abs = d.max_abs.max(e);
        if q != 0.0 {
            d.max_rel = d.max_rel.max(e / q.abs());
        }
        if e > atol + rtol * q.abs() {
            d.ok = false;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, shape: &[usize]) -> ValueMeta {
        ValueMeta {
            name: name.into(),
            dtype: DataType::Float,
            shape: shape.to_vec(),
        }
    }

    #[test]
    fn names_first_then_position_and_shape() {
        let cur = [
            meta("a", &[2]),
            meta("x1", &[3]),
            meta("x2", &[4]),
            meta("d", &[5]),
        ];
        let reference = [
            meta("a", &[2]),
            meta("y0", &[9]),
            meta("y1", &[3]),
            meta("y2", &[4]),
            meta("d", &[5]),
            meta("late", &[3]),
        ];
        assert_eq!(
            match_values(&cur, &reference),
            vec![Some(0), Some(2), Some(3), Some(4)]
        );
        // a same name with another shape is not a match, and a positional
        // match never crosses an anchor
        let cur = [meta("a", &[7]), meta("d", &[5]), meta("z", &[3])];
        assert_eq!(match_values(&cur, &reference), vec![None, Some(4), Some(5)]);
    }

    #[test]
    fn diff_uses_numpy_tolerance() {
        let a = Tensor::from_vec(&[3], vec![1.0f32, 2.0, f32::NAN]).unwrap();
        let b = Tensor::from_vec(&[3], vec![1.0f32, 2.001, f32::NAN]).unwrap();
        let d = diff(&a, &b, 1e-3, 1e-7).unwrap();
        assert!(d.ok);
        assert!((d.max_abs - 0.001).abs() < 1e-6);
        let d = diff(&a, &b, 1e-4, 1e-7).unwrap();
        assert!(!d.ok);
        let c = Tensor::from_vec(&[3], vec![1.0f32, 2.0, 0.0]).unwrap();
        let d = diff(&a, &c, 1e-3, 1e-7).unwrap();
        assert!(!d.ok && d.max_abs.is_infinite());
        let short = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        assert!(diff(&a, &short, 1e-3, 1e-7).is_err());
    }
}
