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
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
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
