//! `TreeEnsembleClassifier` (ai.onnx.ml 1 and 3): per row, the class
//! votes of every tree summed, plus `base_values`, then `post_transform`;
//! `Y[N]` is the winning label (`classlabels_int64s` or
//! `classlabels_strings`), `Z[N, E]` the float scores of the `E` classes.
//!
//! Two classes follow onnxruntime's binary rules: when every vote is for
//! one class (as scikit-learn converters emit binary models) that one score
//! `s` is the positive class's, the label is positive when `s > 0.5` (all
//! weights non-negative: probabilities) or `s > 0` (mixed weights: margins),
//! and the scores become `[1 - s, s]`, or `[-s, s]` / LOGISTIC of both
//! (`[σ(-s), σ(s)]`) for margins.

use super::features::row_count;
use super::forest::{check_features, rows_as, Forest, Real, Votes};
use super::post_transform::{logistic, probit, PostTransform};
use super::tree_nodes_v3::{decode, TreesV3};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{budget, DataType, Tensor, Value};
use std::sync::{Arc, OnceLock};

enum Labels {
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl Labels {
    fn decode(a: &Attrs) -> Result<Labels, KernelError> {
        let ints = a.ints_checked("classlabels_int64s")?.unwrap_or_default();
        let strings = a
            .strings_checked("classlabels_strings")?
            .unwrap_or_default();
        match (ints.is_empty(), strings.is_empty()) {
            (false, true) => Ok(Labels::Ints(ints)),
            (true, false) => Ok(Labels::Strings(strings)),
            (false, false) => {
                bail!("only one of 'classlabels_int64s' and 'classlabels_strings' may be given")
            }
            (true, true) => {
                bail!("one of 'classlabels_int64s' and 'classlabels_strings' is required")
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Labels::Ints(v) => v.len(),
            Labels::Strings(v) => v.len(),
        }
    }
}

struct Classifier {
    trees: TreesV3,
    labels: Labels,
    /// Two classes and every vote for the same one.
    binary: bool,
    f32: Forest<f32>,
    f64: OnceLock<Result<Forest<f64>, KernelError>>,
}

/// What a row's label is: a class index, or onnxruntime's literal 1 / 0
/// for a two-class model whose votes name both classes and whose scores
/// had no second class after base values.
#[derive(Clone, Copy)]
enum Pick {
    Class(usize),
    Literal(i64),
}

impl Pick {
    fn code(self) -> i64 {
        match self {
            Pick::Class(i) => i as i64,
            Pick::Literal(v) => -1 - v,
        }
    }
}

impl Classifier {
    /// Scores and label of one row, in onnxruntime's order of operations.
    fn finish<T: Real>(&self, base: &[T], v: &mut Votes<T>, z: &mut [f32]) -> Pick {
        let post = self.trees.post;
        let (s, h) = (&mut v.score, &mut v.has);
        if z.len() > 2 {
            for (k, &b) in base.iter().enumerate() {
                s[k] = if h[k] { s[k] + b } else { b };
                h[k] = true;
            }
            let mut best: Option<(usize, T)> = None;
            for k in 0..s.len() {
                if h[k] && best.is_none_or(|(_, w)| s[k] > w) {
                    best = Some((k, s[k]));
                }
            }
            let mut row: Vec<f64> = s.iter().map(|v| v.to_f64()).collect();
            post.apply(&mut row);
            for (o, r) in z.iter_mut().zip(row) {
                *o = r as f32;
            }
            return Pick::Class(best.map_or(0, |(k, _)| k));
        }
        // two classes
        let mut second = -1; // onnxruntime's `write_additional_scores`
        let mut two = true;
        match base.len() {
            2 if h[1] => {
                // base_values[0] is not used, as in onnxruntime
                s[1] = base[1] + s[0];
                s[0] = -s[1];
            }
            2 => {
                s[1] = s[1] + base[1];
                s[0] = s[0] + base[0];
            }
            1 => {
                s[0] = s[0] + base[0];
                two = h[1];
            }
            _ => {
                second = 3;
                two = h[1];
            }
        }
        let pos = if two && h[1] {
            s[1]
        } else if h[0] {
            s[0]
        } else {
            T::ZERO
        };
        let pick = if self.binary {
            if self.trees.weights_all_positive {
                if pos > T::from_f64(0.5) {
                    second = 0;
                    Pick::Class(1)
                } else {
                    second = 1;
                    Pick::Class(0)
                }
            } else if pos > T::ZERO {
                second = 2;
                Pick::Class(1)
            } else {
                second = 3;
                Pick::Class(0)
            }
        } else if pos > T::ZERO {
            Pick::Literal(1)
        } else {
            Pick::Literal(0)
        };
        let s0 = s[0].to_f64();
        if two {
            let mut row = [s0, s[1].to_f64()];
            post.apply(&mut row);
            z[0] = row[0] as f32;
            z[1] = row[1] as f32;
        } else if post == PostTransform::Probit {
            z[0] = probit(s0) as f32;
        } else {
            match second {
                0 | 1 => {
                    z[0] = (1.0 - s0) as f32;
                    z[1] = s0 as f32;
                }
                2 | 3 if post == PostTransform::Logistic => {
                    z[0] = logistic(-s0) as f32;
                    z[1] = logistic(s0) as f32;
                }
                2 | 3 => {
                    z[0] = -s0 as f32;
                    z[1] = s0 as f32;
                }
                _ => z[0] = s0 as f32,
            }
        }
        pick
    }

    fn run<T: Real>(&self, forest: &Forest<T>, x: &Tensor) -> Result<Vec<Value>, KernelError> {
        let (data, n, c) = rows_as::<T>(x)?;
        check_features(forest.max_feature, c)?;
        let width = self.labels.len();
        budget::check(&[n, width], 8)?;
        let base: Vec<T> = self
            .trees
            .base_values
            .iter()
            .map(|&v| T::from_f64(v))
            .collect();
        // the classifier always sums (onnxruntime ignores aggregate_function)
        let agg = super::forest::Aggregate::Sum;
        let (z, picks) = forest.run(agg, &data, n, c, width, |v, z: &mut [f32]| {
            self.finish(&base, v, z).code()
        });
        let decode = |code: i64| -> Pick {
            if code >= 0 {
                Pick::Class(code as usize)
            } else {
                Pick::Literal(-1 - code)
            }
        };
        let y = match &self.labels {
            Labels::Ints(l) => {
                let v: Vec<i64> = picks
                    .iter()
                    .map(|&p| match decode(p) {
                        Pick::Class(k) => l.get(k).copied().unwrap_or_default(),
                        Pick::Literal(v) => v,
                    })
                    .collect();
                Tensor::from_vec(&[n], v)?
            }
            Labels::Strings(l) => {
                let v: Vec<String> = picks
                    .iter()
                    .map(|&p| {
                        let k = match decode(p) {
                            Pick::Class(k) => k,
                            Pick::Literal(v) => v as usize,
                        };
                        l.get(k).cloned().unwrap_or_default()
                    })
                    .collect();
                Tensor::from_vec(&[n], v)?
            }
        };
        Ok(vec![
            Value::Tensor(y),
            Value::Tensor(Tensor::from_vec(&[n, width], z)?),
        ])
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n = row_count(cx, 0).flatten();
    let labels = Labels::decode(&cx.attrs)?;
    let elem = match labels {
        Labels::Ints(_) => DataType::Int64,
        Labels::Strings(_) => DataType::String,
    };
    cx.set_tensor(0, elem, Some(vec![n.clone()]));
    cx.set_tensor(
        1,
        DataType::Float,
        Some(vec![n, Some(Expr::int(labels.len() as i64))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let labels = Labels::decode(&info.attrs)?;
    let n = labels.len();
    if n < 2 {
        bail!("a classifier needs at least two class labels, got {n}");
    }
    let trees = decode(&info.attrs, "class", n)?;
    let nb = trees.base_values.len();
    if (n == 2 && nb > 2) || (n > 2 && nb != 0 && nb != n) {
        bail!("attribute 'base_values' has {nb} values: it must have none or one per class ({n})");
    }
    let binary = n == 2 && trees.distinct_ids == 1;
    let f32 = trees.graph.flatten::<f32>()?;
    let c = Arc::new(Classifier {
        trees,
        labels,
        binary,
        f32,
        f64: OnceLock::new(),
    });
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        match x.dtype() {
            DataType::Double => match c.f64.get_or_init(|| c.trees.graph.flatten::<f64>()) {
                Ok(f) => c.run(f, x),
                Err(e) => Err(e.clone()),
            },
            DataType::Float | DataType::Int64 | DataType::Int32 => c.run(&c.f32, x),
            t => bail!("X must be float, double, int64 or int32, got {t}"),
        }
    }))
}
