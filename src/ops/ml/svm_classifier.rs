//! `SVMClassifier`, as onnxruntime computes it (in f32 where it does).
//!
//! With support vectors (`vectors_per_class`), one-vs-one: for each pair of
//! classes `i < j` a decision value `Σ coef·K(x, sv) + rho`, a vote for `i`
//! when it is positive, otherwise for `j`; the label is the class with the
//! most votes (the first on a tie). Without `prob_a`/`prob_b` the scores are
//! the decision values (two classes: `[-d, d]`, `[σ(-d), σ(d)]` with
//! LOGISTIC, `[1 - d, d]` with SOFTMAX); with them, Platt scaling of
//! each pair and Wu–Lin–Weng pairwise coupling give one probability per
//! class. Without support vectors, the linear form: one score
//! `x·coefficients[c] + rho[0]` per class and the label of the best score.
//! `post_transform` applies to the scores. `Y` is `[N]` labels (int64 or
//! string), `Z` float `[N, E]`.

use super::class_labels::ClassLabels;
use super::features::{row_count, rows};
use super::post_transform::PostTransform;
use super::svm_kernel::SvmKernel;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

/// onnxruntime's bound on the number of classes.
const MAX_CLASSES: usize = 65535;

struct SvmClassifierAttrs {
    coefficients: Vec<f32>,
    support_vectors: Vec<f32>,
    /// Support vectors of each class and where each class's start.
    vectors_per_class: Vec<usize>,
    starts: Vec<usize>,
    vector_count: usize,
    /// Features per support vector (SVC form) or per coefficient row
    /// (linear form).
    features: usize,
    rho: Vec<f32>,
    prob_a: Vec<f32>,
    prob_b: Vec<f32>,
    kernel: SvmKernel,
    labels: ClassLabels,
    post: PostTransform,
    all_positive: bool,
}

impl SvmClassifierAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let floats = |name: &str| -> Result<Vec<f32>, KernelError> {
            Ok(a.floats_checked(name)?.unwrap_or_default())
        };
        let coefficients = floats("coefficients")?;
        let support_vectors = floats("support_vectors")?;
        let rho = floats("rho")?;
        let prob_a = floats("prob_a")?;
        let prob_b = floats("prob_b")?;
        if coefficients.is_empty() {
            bail!("attribute 'coefficients' is required and must not be empty");
        }
        if prob_a.len() != prob_b.len() {
            bail!(
                "attributes 'prob_a' ({} values) and 'prob_b' ({} values) must have the same length",
                prob_a.len(),
                prob_b.len()
            );
        }
        let labels = ClassLabels::decode(a)?;
        let k = labels.count();
        if k == 0 {
            bail!("one of the attributes 'classlabels_strings' and 'classlabels_ints' is required");
        }
        if k > MAX_CLASSES {
            bail!("{k} classes are more than SVMClassifier supports ({MAX_CLASSES})");
        }
        let mut vectors_per_class = Vec::new();
        let mut starts = Vec::new();
        let mut vector_count = 0usize;
        for v in a.ints_checked("vectors_per_class")?.unwrap_or_default() {
            let Ok(v) = usize::try_from(v) else {
                bail!("attribute 'vectors_per_class' has a negative count {v}");
            };
            starts.push(vector_count);
            vectors_per_class.push(v);
            vector_count = vector_count
                .checked_add(v)
                .ok_or_else(|| KernelError::new("attribute 'vectors_per_class' overflows"))?;
        }
        let kernel = SvmKernel::decode(a)?;
        let (kernel, features) = if vector_count > 0 {
            if vectors_per_class.len() != k {
                bail!(
                    "attribute 'vectors_per_class' has {} entries but there are {k} class labels",
                    vectors_per_class.len()
                );
            }
            if k < 2 {
                bail!("an SVMClassifier with support vectors needs at least 2 classes, got {k}");
            }
            if !support_vectors.len().is_multiple_of(vector_count) || support_vectors.is_empty() {
                bail!(
                    "attribute 'support_vectors' has {} values, not a positive multiple of the {vector_count} vectors",
                    support_vectors.len()
                );
            }
            let pairs = k * (k - 1) / 2;
            if coefficients.len() < (k - 1) * vector_count {
                bail!(
                    "attribute 'coefficients' has {} values, expected {} classes - 1 × {vector_count} vectors",
                    coefficients.len(),
                    k
                );
            }
            if rho.len() < pairs {
                bail!(
                    "attribute 'rho' has {} values, expected one per pair of classes ({pairs})",
                    rho.len()
                );
            }
            if !prob_a.is_empty() && prob_a.len() < pairs {
                bail!(
                    "attributes 'prob_a' and 'prob_b' have {} values, expected one per pair of classes ({pairs})",
                    prob_a.len()
                );
            }
            (kernel, support_vectors.len() / vector_count)
        } else {
            if rho.is_empty() {
                bail!("attribute 'rho' must have at least one value");
            }
            if !coefficients.len().is_multiple_of(k) {
                bail!(
                    "attribute 'coefficients' has {} values, not a multiple of the {k} classes",
                    coefficients.len()
                );
            }
            // the linear form ignores kernel_type, as onnxruntime does
            (SvmKernel::Linear, coefficients.len() / k)
        };
        let all_positive = coefficients.iter().all(|&c| c >= 0.0);
        Ok(SvmClassifierAttrs {
            coefficients,
            support_vectors,
            vectors_per_class,
            starts,
            vector_count,
            features,
            rho,
            prob_a,
            prob_b,
            kernel,
            labels,
            post: PostTransform::decode(a)?,
            all_positive,
        })
    }

    fn svc(&self) -> bool {
        self.vector_count > 0
    }

    fn classes(&self) -> usize {
        self.labels.count()
    }

    fn have_proba(&self) -> bool {
        !self.prob_a.is_empty()
    }

    /// The number of score columns.
    fn score_count(&self) -> usize {
        let k = self.classes();
        if self.svc() && !self.have_proba() {
            if k > 2 {
                k * (k - 1) / 2
            } else {
                2
            }
        } else {
            k
        }
    }

    /// The pairwise decision values of one row (pairs `(0,1), (0,2), …,
    /// (1,2), …`) and the class with the most votes. Products are f32 and
    /// summed in f64, then rounded to f32, as onnxruntime does.
    fn decisions(&self, kernels: &[f32], scores: &mut Vec<f32>) -> usize {
        let k = self.classes();
        let vc = self.vector_count;
        let mut votes = vec![0usize; k];
        scores.clear();
        let mut pair = 0;
        for i in 0..k {
            for j in i + 1..k {
                let (si, ni) = (self.starts[i], self.vectors_per_class[i]);
                let (sj, nj) = (self.starts[j], self.vectors_per_class[j]);
                let part = |row: usize, start: usize, n: usize| -> f64 {
                    let c = &self.coefficients[row * vc + start..row * vc + start + n];
                    c.iter()
                        .zip(&kernels[start..start + n])
                        .map(|(c, k)| f64::from(c * k))
                        .sum::<f64>()
                };
                let sum = part(j - 1, si, ni) + part(i, sj, nj) + f64::from(self.rho[pair]);
                pair += 1;
                scores.push(sum as f32);
                votes[if sum > 0.0 { i } else { j }] += 1;
            }
        }
        let mut best = 0;
        for (c, &v) in votes.iter().enumerate() {
            if v > votes[best] {
                best = c;
            }
        }
        best
    }

    /// Platt scaling of each pair's decision value, then pairwise coupling:
    /// one probability per class.
    fn probabilities(&self, decisions: &[f32]) -> Vec<f32> {
        let k = self.classes();
        let mut r = vec![0.0f32; k * k];
        let mut pair = 0;
        for i in 0..k {
            for j in i + 1..k {
                let v = decisions[pair] * self.prob_a[pair] + self.prob_b[pair];
                let p = (1.0 - logistic_f32(v)).clamp(1.0e-7, 1.0 - 1.0e-7);
                r[i * k + j] = p;
                r[j * k + i] = 1.0 - p;
                pair += 1;
            }
        }
        pairwise_coupling(k, &r)
    }
}

/// The logistic function in f32 the way onnxruntime writes it.
fn logistic_f32(v: f32) -> f32 {
    let e = 1.0 / (1.0 + (-v.abs()).exp());
    if v < 0.0 {
        1.0 - e
    } else {
        e
    }
}

/// Wu, Lin and Weng's second method for multiclass probabilities from the
/// pairwise ones `r[i][j]` (k × k, row-major), in f32 with at most 100
/// iterations and stopping error `0.005 / k`.
fn pairwise_coupling(k: usize, r: &[f32]) -> Vec<f32> {
    let mut q = vec![0.0f32; k * k];
    let mut p = vec![1.0 / k as f32; k];
    let mut qp = vec![0.0f32; k];
    for i in 0..k {
        for j in 0..k {
            if j < i {
                q[i * k + i] += r[j * k + i] * r[j * k + i];
                q[i * k + j] = q[j * k + i];
            } else if j > i {
                q[i * k + i] += r[j * k + i] * r[j * k + i];
                q[i * k + j] = -r[j * k + i] * r[i * k + j];
            }
        }
    }
    let eps = 0.005 / k as f32;
    for _ in 0..100 {
        let mut pqp = 0.0f32;
        for i in 0..k {
            qp[i] = 0.0;
            for j in 0..k {
                qp[i] += q[i * k + j] * p[j];
            }
            pqp += p[i] * qp[i];
        }
        let max_error = qp.iter().fold(0.0f32, |m, &v| m.max((v - pqp).abs()));
        if max_error < eps {
            break;
        }
        for i in 0..k {
            let diff = (-qp[i] + pqp) / q[i * k + i];
            p[i] += diff;
            pqp = (pqp + diff * (diff * q[i * k + i] + 2.0 * qp[i])) / (1.0 + diff) / (1.0 + diff);
            for j in 0..k {
                qp[j] = (qp[j] + diff * q[i * k + j]) / (1.0 + diff);
                p[j] /= 1.0 + diff;
            }
        }
    }
    p
}

/// Applies `post` to a row of two or more scores.
fn post_row(post: PostTransform, row: &mut [f32]) {
    if post == PostTransform::None {
        return;
    }
    let mut wide: Vec<f64> = row.iter().map(|&v| f64::from(v)).collect();
    post.apply(&mut wide);
    for (o, w) in row.iter_mut().zip(wide) {
        *o = w as f32;
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = SvmClassifierAttrs::decode(&cx.attrs).map_err(|e| ShapeError::new(e.to_string()))?;
    let n = row_count(cx, 0);
    cx.set_tensor(0, a.labels.elem(), n.clone().map(|n| vec![n]));
    cx.set_tensor(
        1,
        DataType::Float,
        n.map(|n| vec![n, Some(Expr::int(a.score_count() as i64))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = SvmClassifierAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = rows(tensor_in(ins, 0)?, "X")?;
        let c = x.c;
        if c != a.features {
            let what = if a.svc() {
                "support vectors"
            } else {
                "coefficient rows"
            };
            bail!(
                "X has {c} features but the {what} of SVMClassifier have {}",
                a.features
            );
        }
        let x32: Vec<f32> = x.data.iter().map(|&v| v as f32).collect();
        let k = a.classes();
        let e = a.score_count();
        let mut z = Vec::with_capacity(x.n * e);
        let mut picks = Vec::with_capacity(x.n);
        let mut kernels = vec![0.0f32; a.vector_count];
        let mut decisions = Vec::new();
        for i in 0..x.n {
            let r = &x32[i * c..(i + 1) * c];
            if a.svc() {
                for (v, kv) in kernels.iter_mut().enumerate() {
                    *kv = a.kernel.eval_f32(r, &a.support_vectors[v * c..(v + 1) * c]);
                }
                picks.push(a.decisions(&kernels, &mut decisions));
                if a.have_proba() {
                    let mut p = a.probabilities(&decisions);
                    post_row(a.post, &mut p);
                    z.extend(p);
                } else if k == 2 {
                    let d = decisions[0];
                    // the second column as onnxruntime (1.32) writes it
                    z.extend(match a.post {
                        PostTransform::None => [-d, d],
                        PostTransform::Logistic => [logistic_f32(-d), logistic_f32(d)],
                        // onnxruntime transforms the one value and gives
                        // NaN in the second column
                        PostTransform::Probit => {
                            let mut one = [f64::from(d)];
                            a.post.apply(&mut one);
                            [one[0] as f32, f32::NAN]
                        }
                        PostTransform::Softmax | PostTransform::SoftmaxZero => [1.0 - d, d],
                    });
                } else {
                    post_row(a.post, &mut decisions);
                    z.extend_from_slice(&decisions);
                }
            } else {
                let mut scores: Vec<f32> = (0..k)
                    .map(|cl| {
                        a.kernel.eval_f32(r, &a.coefficients[cl * c..(cl + 1) * c]) + a.rho[0]
                    })
                    .collect();
                let mut best = 0;
                for (cl, &s) in scores.iter().enumerate() {
                    if s > scores[best] {
                        best = cl;
                    }
                }
                let max = scores[best];
                let pick = if k == 2
                    && !a.have_proba()
                    && ((a.all_positive && max >= 0.5) || (!a.all_positive && max > 0.0))
                {
                    1
                } else {
                    best
                };
                picks.push(pick);
                if k >= 2 {
                    post_row(a.post, &mut scores);
                } else if a.post == PostTransform::Probit {
                    let mut one = [f64::from(scores[0])];
                    a.post.apply(&mut one);
                    scores[0] = one[0] as f32;
                }
                z.extend(scores);
            }
        }
        let y = a.labels.tensor(&picks)?;
        let z = Tensor::from_vec(&[x.n, e], z)?;
        Ok(vec![Value::Tensor(y), Value::Tensor(z)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{floats, ints, run, string, strings};

    fn close(got: &Tensor, want: &[f64]) {
        let g = got.to_f64_vec().unwrap();
        assert_eq!(g.len(), want.len(), "{g:?}");
        for (g1, w) in g.iter().zip(want) {
            assert!((g1 - w).abs() <= 1e-6 + 1e-5 * w.abs(), "{g:?} vs {want:?}");
        }
    }

    /// Three classes (1, 2 and 1 support vectors), RBF; expected values
    /// are onnxruntime 1.32's outputs for the same node.
    fn three_class(extra: Vec<crate::proto::AttributeProto>) -> Result<Vec<Tensor>, String> {
        let mut attrs = vec![
            ints("classlabels_ints", &[10, 20, 30]),
            ints("vectors_per_class", &[1, 2, 1]),
            floats("support_vectors", &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
            floats(
                "coefficients",
                &[0.5, -0.25, 0.75, -1.0, 1.0, 0.5, -0.5, -0.75],
            ),
            floats("rho", &[0.1, -0.2, 0.3]),
            string("kernel_type", "RBF"),
            floats("kernel_params", &[0.5, 0.0, 3.0]),
        ];
        attrs.retain(|a| !extra.iter().any(|e| e.name == a.name));
        attrs.extend(extra);
        let x = Tensor::from_vec(&[3, 2], vec![0.2f32, 0.1, 0.9, 0.8, 0.1, 0.9]).unwrap();
        run("SVMClassifier", attrs, vec![x])
    }

    #[test]
    fn multiclass_votes_decisions_and_probabilities_match_onnxruntime() {
        let out = three_class(vec![]).unwrap();
        assert_eq!(out[0], Tensor::from_vec(&[3], vec![10i64, 30, 30]).unwrap());
        assert_eq!(out[1].shape(), &[3, 3]);
        close(
            &out[1],
            &[
                0.8973505,
                0.29098535,
                -0.028864622,
                0.6518578,
                -0.6909854,
                -0.39710367,
                1.063148,
                -0.2,
                -0.47033358,
            ],
        );
        let out = three_class(vec![
            floats("prob_a", &[-2.0, -1.5, -3.0]),
            floats("prob_b", &[0.1, -0.2, 0.05]),
        ])
        .unwrap();
        assert_eq!(out[0], Tensor::from_vec(&[3], vec![10i64, 30, 30]).unwrap());
        close(
            &out[1],
            &[
                0.58445734, 0.14733057, 0.26821214, 0.27855942, 0.12964393, 0.5917967, 0.44275215,
                0.08233087, 0.47491682,
            ],
        );
        let out = three_class(vec![string("post_transform", "SOFTMAX")]).unwrap();
        close(
            &out[1],
            &[
                0.5150977, 0.28089795, 0.20400438, 0.620577, 0.16203405, 0.21738899, 0.6673137,
                0.18869126, 0.143995,
            ],
        );
    }

    fn binary(extra: Vec<crate::proto::AttributeProto>) -> Vec<Tensor> {
        let mut attrs = vec![
            ints("classlabels_ints", &[3, 7]),
            ints("vectors_per_class", &[1, 1]),
            floats("support_vectors", &[1.0, 0.0, 0.0, 1.0]),
            floats("coefficients", &[1.0, -1.0]),
            floats("rho", &[0.5]),
            floats("kernel_params", &[0.0, 0.0, 0.0]),
        ];
        attrs.extend(extra);
        let x = Tensor::from_vec(&[2, 2], vec![2.0f32, 1.0, 0.0, 3.0]).unwrap();
        run("SVMClassifier", attrs, vec![x]).unwrap()
    }

    #[test]
    fn binary_scores_follow_onnxruntime_per_post_transform() {
        // decision values 1.5 and -2.5: a positive one votes for class 0
        let labels = Tensor::from_vec(&[2], vec![3i64, 7]).unwrap();
        let out = binary(vec![]);
        assert_eq!(out[0], labels);
        close(&out[1], &[-1.5, 1.5, 2.5, -2.5]);
        let out = binary(vec![string("post_transform", "LOGISTIC")]);
        close(&out[1], &[0.18242556, 0.81757444, 0.9241418, 0.075858176]);
        let out = binary(vec![string("post_transform", "SOFTMAX")]);
        close(&out[1], &[-0.5, 1.5, 3.5, -2.5]);
        let out = binary(vec![floats("prob_a", &[-2.0]), floats("prob_b", &[0.1])]);
        assert_eq!(out[0], labels);
        close(&out[1], &[0.94570845, 0.054291647, 0.006059561, 0.9939404]);
    }

    #[test]
    fn linear_form_and_string_labels() {
        let attrs = vec![
            strings("classlabels_strings", &["a", "b", "c"]),
            floats("coefficients", &[1.0, 0.0, 0.0, 1.0, -1.0, -1.0]),
            floats("rho", &[0.25]),
        ];
        let x = Tensor::from_vec(&[2, 2], vec![-1.0f32, 2.0, 3.0, 1.0]).unwrap();
        let out = run("SVMClassifier", attrs, vec![x]).unwrap();
        let want: Vec<String> = vec!["b".into(), "a".into()];
        assert_eq!(out[0], Tensor::from_vec(&[2], want).unwrap());
        close(&out[1], &[-0.75, 2.25, -0.75, 3.25, 1.25, -3.75]);
        // two classes with all-positive weights: class 1 once a score is ≥ 0.5
        let attrs = vec![
            ints("classlabels_ints", &[4, 5]),
            floats("coefficients", &[0.5, 0.0, 0.25, 0.5]),
            floats("rho", &[0.1]),
        ];
        let x = Tensor::from_vec(&[2, 2], vec![0.2f32, 0.2, 1.0, 1.0]).unwrap();
        let out = run("SVMClassifier", attrs, vec![x]).unwrap();
        assert_eq!(out[0], Tensor::from_vec(&[2], vec![5i64, 5]).unwrap());
        close(&out[1], &[0.2, 0.25, 0.6, 0.85]);
    }

    #[test]
    fn bad_attributes_and_inputs_are_errors() {
        let err = three_class(vec![ints("vectors_per_class", &[1, 3])]).unwrap_err();
        assert!(err.contains("vectors_per_class"), "{err}");
        let err = three_class(vec![floats("prob_a", &[1.0])]).unwrap_err();
        assert!(err.contains("prob_b"), "{err}");
        let err = three_class(vec![floats("rho", &[0.0])]).unwrap_err();
        assert!(err.contains("rho"), "{err}");
        let attrs = vec![
            ints("classlabels_ints", &[3, 7]),
            ints("vectors_per_class", &[1, 1]),
            floats("support_vectors", &[1.0, 0.0, 0.0, 1.0]),
            floats("coefficients", &[1.0, -1.0]),
            floats("rho", &[0.5]),
        ];
        let x = Tensor::from_vec(&[1, 3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let err = run("SVMClassifier", attrs, vec![x]).unwrap_err();
        assert!(err.contains("features"), "{err}");
    }
}
