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
use crate::ops::Attrs;
use crate::runtime::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::shape::{InferCtx, ShapeError};
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

#[cfg(test)]
mod tests {
    use super::super::forest::testing::{output_types, run_text};
    use crate::tensor::Tensor;

    /// One tree: `x0 <= 0.5` → leaf 1, else leaf 2. Expected values were
    /// checked against onnxruntime 1.23.
    fn model(y: &str, labels: &str, votes: &str, extra: &str) -> String {
        format!(
            r#"<ir_version: 10, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
g (float[N,1] x) => ({y}[N] y, float[N,E] z)
{{
  y, z = ai.onnx.ml.TreeEnsembleClassifier <{labels}, nodes_treeids = [0, 0, 0],
    nodes_nodeids = [0, 1, 2], nodes_featureids = [0, 0, 0],
    nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values = [0.5, 0.0, 0.0],
    nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], {votes}{extra}> (x)
}}"#
        )
    }

    fn run(m: &str) -> (Tensor, Vec<f32>) {
        let x = Tensor::from_vec(&[2, 1], vec![0.0f32, 1.0]).unwrap();
        let mut out = run_text(m, x).unwrap().into_iter();
        let y = out.next().unwrap();
        let z = out.next().unwrap();
        let z = z
            .to_f64_vec()
            .unwrap()
            .into_iter()
            .map(|v| v as f32)
            .collect();
        (y, z)
    }

    #[test]
    fn binary_probabilities_from_one_class_score() {
        let m = model(
            "int64",
            "classlabels_int64s = [-3, 7]",
            "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [0.2, 0.9]",
            "",
        );
        let (y, z) = run(&m);
        assert_eq!(y.to_i64_vec().unwrap(), vec![-3, 7]);
        assert_eq!(z, vec![0.8, 0.2, 0.100_000_024, 0.9]);
        assert_eq!(output_types(&m), vec!["int64[N]", "float[N,E]", "E = 2"]);
    }

    #[test]
    fn binary_margins_with_base_value_and_logistic() {
        let m = model(
            "string",
            "classlabels_strings = [\"no\", \"yes\"]",
            "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [-1.0, 2.0]",
            ", base_values = [0.25], post_transform = \"LOGISTIC\"",
        );
        let (y, z) = run(&m);
        assert_eq!(y.string_values().unwrap(), vec!["no", "yes"]);
        let want = [0.679_178_7, 0.320_821_3, 0.095_349_49, 0.904_650_5];
        for (g, w) in z.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{z:?}");
        }
        assert_eq!(output_types(&m), vec!["string[N]", "float[N,E]", "E = 2"]);
    }

    #[test]
    fn multiclass_softmax_and_argmax_label() {
        let m = model(
            "string",
            "classlabels_strings = [\"a\", \"b\", \"c\"]",
            "class_treeids = [0, 0, 0], class_nodeids = [1, 1, 2], class_ids = [0, 2, 1], class_weights = [1.0, 3.0, 2.0]",
            ", post_transform = \"SOFTMAX\"",
        );
        let (y, z) = run(&m);
        assert_eq!(y.string_values().unwrap(), vec!["c", "b"]);
        let want = [
            0.114_195_2,
            0.042_010_07,
            0.843_794_7,
            0.106_506_97,
            0.786_986,
            0.106_506_97,
        ];
        for (g, w) in z.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{z:?}");
        }
        assert_eq!(output_types(&m), vec!["string[N]", "float[N,E]", "E = 3"]);
    }

    #[test]
    fn two_classes_both_voted_follow_onnxruntime_literal_labels() {
        // onnxruntime labels such a row 1 or 0 (not a class label) by the
        // sign of the second score
        let votes = "class_treeids = [0, 0, 0, 0], class_nodeids = [1, 1, 2, 2], class_ids = [0, 1, 0, 1], class_weights = [0.7, 0.3, 0.2, 0.8]";
        let m = model("int64", "classlabels_int64s = [5, 9]", votes, "");
        let (y, z) = run(&m);
        assert_eq!(y.to_i64_vec().unwrap(), vec![1, 1]);
        assert_eq!(z, vec![0.7, 0.3, 0.2, 0.8]);
        let m = model(
            "int64",
            "classlabels_int64s = [5, 9]",
            votes,
            ", base_values = [0.1, -1.0]",
        );
        let (y, z) = run(&m);
        assert_eq!(y.to_i64_vec().unwrap(), vec![0, 0]);
        assert_eq!(z, vec![0.3, -0.3, 0.8, -0.8]);
    }

    #[test]
    fn bad_labels_and_base_values_are_errors() {
        let votes = "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [0.2, 0.9]";
        let x = || Tensor::from_vec(&[1, 1], vec![0.0f32]).unwrap();
        let one = model("int64", "classlabels_int64s = [4]", votes, "");
        assert!(run_text(&one, x()).unwrap_err().contains("at least two"));
        let base = model(
            "int64",
            "classlabels_int64s = [4, 5]",
            votes,
            ", base_values = [1.0, 2.0, 3.0]",
        );
        assert!(run_text(&base, x()).unwrap_err().contains("base_values"));
        let class = model(
            "int64",
            "classlabels_int64s = [4, 5]",
            &votes.replace("class_ids = [0, 0]", "class_ids = [0, 2]"),
            "",
        );
        assert!(run_text(&class, x()).unwrap_err().contains("id 2"));
        let unknown_node = model(
            "int64",
            "classlabels_int64s = [4, 5]",
            &votes.replace("class_nodeids = [1, 2]", "class_nodeids = [1, 8]"),
            "",
        );
        assert!(run_text(&unknown_node, x()).unwrap_err().contains("node 8"));
    }
}
