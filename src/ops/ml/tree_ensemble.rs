//! `TreeEnsemble` (ai.onnx.ml 5): branches and leaves in separate arrays
//! addressed by index (`nodes_*`, `leaf_*`), one root per tree
//! (`tree_roots`), thresholds `nodes_splits` and modes `nodes_modes` as
//! tensors (uint8 codes, 6 = BRANCH_MEMBER with its set in
//! `membership_values`, sets separated by NaN), integer
//! `aggregate_function` and `post_transform`. `Y[N, n_targets]` has the
//! type of `X` (float, double or float16).

use super::features::row_count;
use super::forest::{
    check_features, finish_regression, rows_as, tensor_values, Aggregate, Branch, Child, Forest,
    Graph, Mode, Real,
};
use super::post_transform::PostTransform;
use crate::bail;
use crate::expr::Expr;
use crate::ops::Attrs;
use crate::runtime::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::shape::{InferCtx, ShapeError};
use crate::tensor::{budget, DataType, Tensor, Value};
use half::f16;
use std::sync::{Arc, OnceLock};

struct Attrs5 {
    graph: Graph,
    aggregate: Aggregate,
    post: PostTransform,
}

fn n_targets(a: &Attrs) -> Result<usize, KernelError> {
    match a.int_checked("n_targets")? {
        Some(n) if n >= 1 && n <= u32::MAX as i64 => Ok(n as usize),
        Some(n) => bail!(
            "attribute 'n_targets' must be between 1 and {}, got {n}",
            u32::MAX
        ),
        None => bail!("attribute 'n_targets' is required"),
    }
}

fn ints(a: &Attrs, name: &str) -> Result<Vec<i64>, KernelError> {
    Ok(a.ints_checked(name)?.unwrap_or_default())
}

fn index(v: i64, what: &str) -> Result<usize, KernelError> {
    usize::try_from(v).map_err(|_| KernelError::new(format!("{what} has a negative index {v}")))
}

impl Attrs5 {
    fn decode(a: &Attrs) -> Result<Attrs5, KernelError> {
        let n_targets = n_targets(a)?;
        let feature = ints(a, "nodes_featureids")?;
        let t_id = ints(a, "nodes_truenodeids")?;
        let f_id = ints(a, "nodes_falsenodeids")?;
        let t_leaf = ints(a, "nodes_trueleafs")?;
        let f_leaf = ints(a, "nodes_falseleafs")?;
        let missing = ints(a, "nodes_missing_value_tracks_true")?;
        let modes = tensor_values(a, "nodes_modes")?
            .map(|v| v.0)
            .unwrap_or_default();
        let splits = tensor_values(a, "nodes_splits")?
            .map(|v| v.0)
            .unwrap_or_default();
        let members = tensor_values(a, "membership_values")?.map(|v| v.0);
        let targets = ints(a, "leaf_targetids")?;
        let weights = tensor_values(a, "leaf_weights")?
            .map(|v| v.0)
            .unwrap_or_default();
        let roots = ints(a, "tree_roots")?;
        let n = feature.len();
        for (name, len) in [
            ("nodes_truenodeids", t_id.len()),
            ("nodes_falsenodeids", f_id.len()),
            ("nodes_trueleafs", t_leaf.len()),
            ("nodes_falseleafs", f_leaf.len()),
            ("nodes_modes", modes.len()),
            ("nodes_splits", splits.len()),
        ] {
            if len != n {
                bail!("attribute '{name}' has {len} values, but nodes_featureids has {n}");
            }
        }
        if !missing.is_empty() && missing.len() != n {
            bail!(
                "attribute 'nodes_missing_value_tracks_true' has {} values, but there are {n} nodes",
                missing.len()
            );
        }
        if targets.len() != weights.len() {
            bail!(
                "attribute 'leaf_targetids' has {} values, but leaf_weights has {}",
                targets.len(),
                weights.len()
            );
        }
        let mut mode = Vec::with_capacity(n);
        for &m in &modes {
            match Mode::from_code(m as i64).filter(|_| m.fract() == 0.0) {
                Some(x) => mode.push(x),
                None => bail!("nodes_modes has an unknown mode {m} (0 to 6)"),
            }
        }
        // the sets of the member branches, in node order, NaN-separated
        let mut sets = members.unwrap_or_default().into_iter();
        let child = |leaf: i64, id: i64| -> Result<Child, KernelError> {
            let id = index(id, "nodes_truenodeids/nodes_falsenodeids")?;
            Ok(if leaf != 0 {
                Child::Leaf(id)
            } else {
                Child::Branch(id)
            })
        };
        let mut branches = Vec::with_capacity(n);
        for i in 0..n {
            let mut set = Vec::new();
            if mode[i] == Mode::Member {
                for v in sets.by_ref() {
                    if v.is_nan() {
                        break;
                    }
                    set.push(v);
                }
            }
            branches.push(Branch {
                feature: feature[i],
                mode: mode[i],
                threshold: splits[i],
                members: set,
                missing_true: missing.get(i) == Some(&1),
                on_true: child(t_leaf[i], t_id[i])?,
                on_false: child(f_leaf[i], f_id[i])?,
            });
        }
        let mut leaves = Vec::with_capacity(targets.len());
        for (&t, &w) in targets.iter().zip(&weights) {
            leaves.push(vec![(index(t, "leaf_targetids")?, w)]);
        }
        let mut tree_roots = Vec::with_capacity(roots.len());
        for &r in &roots {
            let i = index(r, "tree_roots")?;
            let Some(b) = branches.get(i) else {
                bail!("tree root {i} is out of range ({n} nodes)");
            };
            // a tree that is one leaf: both sides name the same leaf, which
            // has the root's index (as the reference and onnxruntime read it)
            let single =
                matches!((b.on_true, b.on_false), (Child::Leaf(x), Child::Leaf(y)) if x == y);
            tree_roots.push(if single {
                Child::Leaf(i)
            } else {
                Child::Branch(i)
            });
        }
        let aggregate = match a.int_checked("aggregate_function")? {
            None => Aggregate::Sum,
            Some(c) => match Aggregate::from_code(c) {
                Some(g) => g,
                None => bail!("attribute 'aggregate_function' must be 0 to 3, got {c}"),
            },
        };
        let post = match a.int_checked("post_transform")?.unwrap_or(0) {
            0 => PostTransform::None,
            1 => PostTransform::Softmax,
            2 => PostTransform::Logistic,
            3 => PostTransform::SoftmaxZero,
            4 => PostTransform::Probit,
            c => bail!("attribute 'post_transform' must be 0 to 4, got {c}"),
        };
        Ok(Attrs5 {
            graph: Graph {
                branches,
                leaves,
                roots: tree_roots,
                n_targets,
            },
            aggregate,
            post,
        })
    }
}

struct Ensemble {
    attrs: Attrs5,
    f32: Forest<f32>,
    f64: OnceLock<Result<Forest<f64>, KernelError>>,
}

impl Ensemble {
    fn run<T: Real>(
        &self,
        forest: &Forest<T>,
        x: &Tensor,
    ) -> Result<(Vec<f64>, usize, usize), KernelError> {
        let (data, n, c) = rows_as::<T>(x)?;
        check_features(forest.max_feature, c)?;
        let width = forest.n_targets;
        budget::check(&[n, width], 8)?;
        let (agg, post, n_trees) = (self.attrs.aggregate, self.attrs.post, forest.n_trees());
        let (out, _) = forest.run(agg, &data, n, c, width, |v, o: &mut [f64]| {
            finish_regression(agg, n_trees, &[], post, v, o);
            0
        });
        Ok((out, n, width))
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let t = n_targets(&cx.attrs).ok().map(|n| Expr::int(n as i64));
    let n = row_count(cx, 0).flatten();
    cx.set_tensor(0, e, Some(vec![n, t]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attrs = Attrs5::decode(&info.attrs)?;
    let f32 = attrs.graph.flatten::<f32>()?;
    let e = Arc::new(Ensemble {
        attrs,
        f32,
        f64: OnceLock::new(),
    });
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = match x.dtype() {
            DataType::Double => {
                let f = match e.f64.get_or_init(|| e.attrs.graph.flatten::<f64>()) {
                    Ok(f) => f,
                    Err(err) => return Err(err.clone()),
                };
                let (out, n, w) = e.run(f, x)?;
                Tensor::from_vec(&[n, w], out)?
            }
            DataType::Float => {
                let (out, n, w) = e.run(&e.f32, x)?;
                let out: Vec<f32> = out.into_iter().map(|v| v as f32).collect();
                Tensor::from_vec(&[n, w], out)?
            }
            DataType::Float16 => {
                let (out, n, w) = e.run(&e.f32, x)?;
                let out: Vec<f16> = out.into_iter().map(f16::from_f64).collect();
                Tensor::from_vec(&[n, w], out)?
            }
            t => bail!("X must be float, double or float16, got {t}"),
        };
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {
    use super::super::forest::testing::{output_types, run_text};
    use crate::tensor::Tensor;

    /// Tree 0: `x0 <= 1` ? (`x1 in {2, 5}`, NaN true ? leaf 1 : leaf 2) :
    /// leaf 0; tree 1 is the single leaf 2. Leaves: target 0 = 1, target
    /// 1 = 10, target 0 = 100. Values checked against onnxruntime 1.23 and
    /// the onnx reference.
    fn model(t: &str, extra: &str) -> String {
        format!(
            r#"<ir_version: 10, opset_import: ["" : 17, "ai.onnx.ml" : 5]>
g ({t}[N,C] x) => (y)
{{
  y = ai.onnx.ml.TreeEnsemble <n_targets = 2, aggregate_function = 0,
    nodes_featureids = [0, 1, 0], nodes_truenodeids = [1, 1, 2], nodes_falsenodeids = [0, 2, 2],
    nodes_trueleafs = [0, 1, 1], nodes_falseleafs = [1, 1, 1],
    nodes_missing_value_tracks_true = [0, 1, 0],
    nodes_modes = uint8[3] {{0, 6, 0}}, nodes_splits = {t}[3] {{1.0, 0.0, 0.0}},
    membership_values = {t}[3] {{2.0, 5.0, nan}},
    leaf_targetids = [0, 1, 0], leaf_weights = {t}[3] {{1.0, 10.0, 100.0}},
    tree_roots = [0, 2]{extra}> (x)
}}"#
        )
    }

    const ROWS: [f64; 8] = [0.0, 5.0, 0.0, 3.0, 0.0, f64::NAN, 2.0, 5.0];
    const WANT: [f64; 8] = [50.0, 5.0, 100.0, 0.0, 50.0, 5.0, 50.5, 0.0];

    #[test]
    fn member_sets_missing_tracks_and_single_leaf_trees_in_double() {
        let m = model("double", "");
        let x = Tensor::from_vec(&[4, 2], ROWS.to_vec()).unwrap();
        let y = run_text(&m, x).unwrap().remove(0);
        assert_eq!(y.dtype(), crate::tensor::DataType::Double);
        assert_eq!(y.to_f64_vec().unwrap(), WANT.to_vec());
        assert_eq!(output_types(&m), vec!["double[N,2]"]);
    }

    #[test]
    fn float_and_float16_inputs_keep_their_type() {
        let x32: Vec<f32> = ROWS.iter().map(|&v| v as f32).collect();
        let y = run_text(&model("float", ""), Tensor::from_vec(&[4, 2], x32).unwrap()).unwrap();
        assert_eq!(y[0].dtype(), crate::tensor::DataType::Float);
        assert_eq!(y[0].to_f64_vec().unwrap(), WANT.to_vec());
        let x16: Vec<half::f16> = ROWS.iter().map(|&v| half::f16::from_f64(v)).collect();
        // float16 X with float splits and weights
        let m = model("float", "").replace("float[N,C] x", "float16[N,C] x");
        let y = run_text(&m, Tensor::from_vec(&[4, 2], x16).unwrap()).unwrap();
        assert_eq!(y[0].dtype(), crate::tensor::DataType::Float16);
        assert_eq!(y[0].to_f64_vec().unwrap(), WANT.to_vec());
    }

    #[test]
    fn sum_with_softmax_over_targets() {
        let m = model("double", "").replace("aggregate_function = 0", "aggregate_function = 1");
        let m = m.replace(
            "tree_roots = [0, 2]",
            "tree_roots = [0, 2], post_transform = 1",
        );
        let x = Tensor::from_vec(&[1, 2], vec![2.0, 5.0]).unwrap();
        // scores [101, 0] → softmax
        let y = run_text(&m, x).unwrap().remove(0).to_f64_vec().unwrap();
        assert!((y[0] - 1.0).abs() < 1e-12 && y[1] < 1e-40, "{y:?}");
    }

    #[test]
    fn malformed_attributes_are_errors() {
        let x = || Tensor::from_vec(&[1, 2], vec![0.0, 0.0]).unwrap();
        let bad_mode = model("double", "").replace("{0, 6, 0}", "{0, 9, 0}");
        assert!(run_text(&bad_mode, x()).unwrap_err().contains("mode 9"));
        let bad_root = model("double", "").replace("tree_roots = [0, 2]", "tree_roots = [0, 5]");
        assert!(run_text(&bad_root, x())
            .unwrap_err()
            .contains("tree root 5"));
        let bad_leaf = model("double", "").replace(
            "nodes_falsenodeids = [0, 2, 2]",
            "nodes_falsenodeids = [0, 7, 2]",
        );
        assert!(run_text(&bad_leaf, x())
            .unwrap_err()
            .contains("leaf index 7"));
        // node 1's false side points back at branch 0: a cycle
        let cycle = model("double", "")
            .replace(
                "nodes_falsenodeids = [0, 2, 2]",
                "nodes_falsenodeids = [0, 0, 2]",
            )
            .replace(
                "nodes_falseleafs = [1, 1, 1]",
                "nodes_falseleafs = [1, 0, 1]",
            );
        assert!(run_text(&cycle, x()).unwrap_err().contains("reached twice"));
        let bad_target =
            model("double", "").replace("leaf_targetids = [0, 1, 0]", "leaf_targetids = [0, 2, 0]");
        assert!(run_text(&bad_target, x())
            .unwrap_err()
            .contains("target/class 2"));
        let short =
            model("double", "").replace("nodes_trueleafs = [0, 1, 1]", "nodes_trueleafs = [0, 1]");
        assert!(run_text(&short, x())
            .unwrap_err()
            .contains("nodes_trueleafs"));
    }
}
