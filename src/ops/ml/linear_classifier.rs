//! `LinearClassifier`: scores `X · coefficientsᵀ + intercepts`, label by the
//! best score (sign of the single score for a binary model), scores after
//! `post_transform`.

use super::class_labels::ClassLabels;
use super::features::{row_count, rows};
use super::post_transform::{logistic, PostTransform};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

struct LinearClassifierAttrs {
    coefficients: Vec<f64>,
    intercepts: Vec<f64>,
    labels: ClassLabels,
    post: PostTransform,
}

impl LinearClassifierAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let coefficients: Vec<f64> = a.floats_f64_checked("coefficients")?.unwrap_or_default();
        if coefficients.is_empty() {
            bail!("attribute 'coefficients' is required and must not be empty");
        }
        let intercepts = a.floats_f64_checked("intercepts")?.unwrap_or_default();
        let multi_class = a.int_checked("multi_class")?.unwrap_or(0);
        if multi_class != 0 && multi_class != 1 {
            bail!("attribute 'multi_class' must be 0 or 1, got {multi_class}");
        }
        Ok(LinearClassifierAttrs {
            coefficients,
            intercepts,
            labels: ClassLabels::decode(a)?,
            post: PostTransform::decode(a)?,
        })
    }

    /// The number of score columns before a second class is added: the
    /// number of intercepts, or coefficients per feature without them.
    fn class_count(&self, c: usize) -> Result<usize, KernelError> {
        if !self.intercepts.is_empty() {
            let k = self.intercepts.len();
            if self.coefficients.len() != k * c {
                bail!(
                    "attribute 'coefficients' has {} values, expected {k} classes × {c} features",
                    self.coefficients.len()
                );
            }
            return Ok(k);
        }
        if c == 0 || !self.coefficients.len().is_multiple_of(c) {
            bail!(
                "attribute 'coefficients' has {} values, not a multiple of the {c} features",
                self.coefficients.len()
            );
        }
        Ok(self.coefficients.len() / c)
    }

    /// A single score with two labels gives two score columns.
    fn binary_pair(&self, k: usize) -> bool {
        k == 1 && self.labels.count() == 2
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = LinearClassifierAttrs::decode(&cx.attrs).map_err(|e| ShapeError::new(e.to_string()))?;
    let n = row_count(cx, 0);
    let k = if !a.intercepts.is_empty() {
        Some(a.intercepts.len())
    } else {
        cx.shape(0)
            .and_then(|s| s.last().cloned().flatten())
            .and_then(|d| d.as_int())
            .filter(|&c| c > 0)
            .map(|c| a.coefficients.len() / c as usize)
    };
    let e = k.map(|k| if a.binary_pair(k) { 2 } else { k });
    cx.set_tensor(0, a.labels.elem(), n.clone().map(|n| vec![n]));
    cx.set_tensor(
        1,
        DataType::Float,
        n.map(|n| vec![n, e.map(|e| Expr::int(e as i64))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = LinearClassifierAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = rows(tensor_in(ins, 0)?, "X")?;
        let k = a.class_count(x.c)?;
        let pair = a.binary_pair(k);
        let e = if pair { 2 } else { k };
        let mut scores = Vec::with_capacity(x.n * e);
        let mut picks = Vec::with_capacity(x.n);
        let mut row_scores = vec![0.0; k];
        for i in 0..x.n {
            let r = x.row(i);
            for (j, s) in row_scores.iter_mut().enumerate() {
                let w = &a.coefficients[j * x.c..(j + 1) * x.c];
                let dot: f64 = r.iter().zip(w).map(|(v, w)| v * w).sum();
                *s = dot + a.intercepts.get(j).copied().unwrap_or(0.0);
            }
            if k == 1 {
                picks.push(usize::from(row_scores[0] > 0.0));
            } else {
                let mut best = 0;
                for (j, &s) in row_scores.iter().enumerate() {
                    if s > row_scores[best] {
                        best = j;
                    }
                }
                picks.push(best);
            }
            if pair {
                let s = row_scores[0];
                match a.post {
                    PostTransform::Logistic => {
                        let p = logistic(s);
                        scores.extend([1.0 - p, p]);
                    }
                    PostTransform::None => scores.extend([-s, s]),
                    other => {
                        let mut two = [-s, s];
                        other.apply(&mut two);
                        scores.extend(two);
                    }
                }
            } else {
                let mut out = row_scores.clone();
                a.post.apply(&mut out);
                scores.extend(out);
            }
        }
        let labels = if k == 1 && a.labels.count() != 2 {
            a.labels.default_binary()
        } else {
            a.labels.clone()
        };
        let y = labels.tensor(&picks)?;
        let scores: Vec<f32> = scores.into_iter().map(|v| v as f32).collect();
        let z = Tensor::from_vec(&[x.n, e], scores)?;
        Ok(vec![Value::Tensor(y), Value::Tensor(z)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{floats, ints, run, string, strings};

    #[test]
    fn binary_with_two_labels_gives_two_score_columns() {
        let attrs = vec![
            floats("coefficients", &[1.0, -1.0]),
            floats("intercepts", &[0.5]),
            ints("classlabels_ints", &[3, 7]),
            string("post_transform", "LOGISTIC"),
        ];
        let x = Tensor::from_vec(&[2, 2], vec![2.0f32, 1.0, 0.0, 3.0]).unwrap();
        let out = run("LinearClassifier", attrs.clone(), vec![x]).unwrap();
        assert_eq!(out[0], Tensor::from_vec(&[2], vec![7i64, 3]).unwrap());
        let z = out[1].to_f64_vec().unwrap();
        let p0 = logistic(1.5);
        let p1 = logistic(-2.5);
        let want = [1.0 - p0, p0, 1.0 - p1, p1];
        for (g, w) in z.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{z:?}");
        }
    }

    #[test]
    fn multiclass_picks_best_and_bad_lengths_are_errors() {
        let attrs = vec![
            floats("coefficients", &[1.0, 0.0, 0.0, 1.0, -1.0, -1.0]),
            floats("intercepts", &[0.0, 0.0, 0.0]),
            strings("classlabels_strings", &["a", "b", "c"]),
        ];
        let x = Tensor::from_vec(&[2], vec![-1.0f32, 2.0]).unwrap();
        let out = run("LinearClassifier", attrs.clone(), vec![x]).unwrap();
        assert_eq!(
            out[0],
            Tensor::from_vec(&[1], vec!["b".to_string()]).unwrap()
        );
        assert_eq!(out[1].shape(), &[1, 3]);
        let x3 = Tensor::from_vec(&[1, 3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let err = run("LinearClassifier", attrs, vec![x3]).unwrap_err();
        assert!(err.contains("coefficients"), "{err}");
    }
}
