//! The node and vote attributes of `TreeEnsembleClassifier` and
//! `TreeEnsembleRegressor` (ai.onnx.ml 1 and 3): parallel `nodes_*` lists
//! keyed by `(tree id, node id)`, votes keyed the same way (`class_*` or
//! `target_*`), `base_values`, with the opset 3 `*_as_tensor` variants
//! (possibly double) in place of the float lists. Decoded into a
//! [`Graph`], every id resolved and checked.

use super::forest::{tensor_values, Aggregate, Branch, Child, Graph, Mode};
use super::post_transform::PostTransform;
use crate::bail;
use crate::ops::Attrs;
use crate::ops::KernelError;
use std::collections::{HashMap, HashSet};

/// What the opset 1/3 attributes describe.
#[derive(Debug)]
pub struct TreesV3 {
    pub graph: Graph,
    pub base_values: Vec<f64>,
    pub aggregate: Aggregate,
    pub post: PostTransform,
    /// No vote weight is negative.
    pub weights_all_positive: bool,
    /// The number of distinct target/class ids voted for.
    pub distinct_ids: usize,
}

fn ints(a: &Attrs, name: &str) -> Result<Vec<i64>, KernelError> {
    Ok(a.ints_checked(name)?.unwrap_or_default())
}

/// A float list attribute or its `_as_tensor` variant (both given is an
/// error); `None` when neither is.
fn floats_or_tensor(a: &Attrs, name: &str) -> Result<Option<Vec<f64>>, KernelError> {
    let list = a.floats_checked(name)?;
    let tensor_name = format!("{name}_as_tensor");
    let tensor = tensor_values(a, &tensor_name)?;
    match (list, tensor) {
        (Some(l), Some((t, _))) if !l.is_empty() && !t.is_empty() => {
            bail!("attributes '{name}' and '{tensor_name}' are both given")
        }
        (Some(l), Some((t, _))) => Ok(Some(if l.is_empty() {
            t
        } else {
            l.into_iter().map(f64::from).collect()
        })),
        (Some(l), None) => Ok(Some(l.into_iter().map(f64::from).collect())),
        (None, Some((t, _))) => Ok(Some(t)),
        (None, None) => Ok(None),
    }
}

/// Decodes the trees; `votes` is `"class"` or `"target"`, `n_targets` the
/// number of targets or classes.
pub fn decode(a: &Attrs, votes: &str, n_targets: usize) -> Result<TreesV3, KernelError> {
    let tree = ints(a, "nodes_treeids")?;
    let id = ints(a, "nodes_nodeids")?;
    let feature = ints(a, "nodes_featureids")?;
    let t_id = ints(a, "nodes_truenodeids")?;
    let f_id = ints(a, "nodes_falsenodeids")?;
    let missing = ints(a, "nodes_missing_value_tracks_true")?;
    let modes = a.strings_checked("nodes_modes")?.unwrap_or_default();
    let values = floats_or_tensor(a, "nodes_values")?.unwrap_or_default();
    let n = tree.len();
    for (name, len) in [
        ("nodes_nodeids", id.len()),
        ("nodes_featureids", feature.len()),
        ("nodes_modes", modes.len()),
        ("nodes_truenodeids", t_id.len()),
        ("nodes_falsenodeids", f_id.len()),
        ("nodes_values", values.len()),
    ] {
        if len != n {
            bail!("attribute '{name}' has {len} values, but nodes_treeids has {n}");
        }
    }
    if n == 0 {
        bail!("the ensemble has no nodes");
    }
    let mut mode = Vec::with_capacity(n);
    for m in &modes {
        match Mode::from_name(m) {
            Some(x) => mode.push(x),
            None => bail!("unknown node mode '{m}' in nodes_modes"),
        }
    }
    // every (tree, node) once; leaves and branches numbered apart
    let mut at: HashMap<(i64, i64), usize> = HashMap::with_capacity(n);
    let mut kind = Vec::with_capacity(n);
    let (mut n_branches, mut n_leaves) = (0usize, 0usize);
    let mut roots = Vec::new();
    let mut seen_trees = HashSet::new();
    for i in 0..n {
        if at.insert((tree[i], id[i]), i).is_some() {
            bail!("node {} of tree {} is defined twice", id[i], tree[i]);
        }
        let k = if mode[i] == Mode::Leaf {
            n_leaves += 1;
            Child::Leaf(n_leaves - 1)
        } else {
            n_branches += 1;
            Child::Branch(n_branches - 1)
        };
        kind.push(k);
        // a tree's root is its first listed node (as onnxruntime reads it)
        if seen_trees.insert(tree[i]) {
            roots.push(k);
        }
    }
    let child = |i: usize, target: i64, side: &str| -> Result<Child, KernelError> {
        match at.get(&(tree[i], target)) {
            Some(&j) => Ok(kind[j]),
            None => bail!(
                "node {} of tree {} has {side} child {target}, which tree {} does not define",
                id[i],
                tree[i],
                tree[i]
            ),
        }
    };
    let mut branches = Vec::with_capacity(n_branches);
    for i in 0..n {
        if mode[i] == Mode::Leaf {
            continue;
        }
        branches.push(Branch {
            feature: feature[i],
            mode: mode[i],
            threshold: values[i],
            members: Vec::new(),
            missing_true: missing.get(i) == Some(&1),
            on_true: child(i, t_id[i], "true")?,
            on_false: child(i, f_id[i], "false")?,
        });
    }
    // votes
    let v_ids = ints(a, &format!("{votes}_ids"))?;
    let v_nodes = ints(a, &format!("{votes}_nodeids"))?;
    let v_trees = ints(a, &format!("{votes}_treeids"))?;
    let v_w = floats_or_tensor(a, &format!("{votes}_weights"))?.unwrap_or_default();
    for (name, len) in [
        (format!("{votes}_nodeids"), v_nodes.len()),
        (format!("{votes}_treeids"), v_trees.len()),
        (format!("{votes}_weights"), v_w.len()),
    ] {
        if len != v_ids.len() {
            bail!(
                "attribute '{name}' has {len} values, but {votes}_ids has {}",
                v_ids.len()
            );
        }
    }
    let mut leaves = vec![Vec::new(); n_leaves];
    let mut distinct = HashSet::new();
    for k in 0..v_ids.len() {
        let (t, nd, cid, w) = (v_trees[k], v_nodes[k], v_ids[k], v_w[k]);
        let Some(&i) = at.get(&(t, nd)) else {
            bail!("{votes} weight {k} is for node {nd} of tree {t}, which is not defined");
        };
        let Ok(c) = usize::try_from(cid) else {
            bail!("{votes}_ids has a negative id {cid}");
        };
        if c >= n_targets {
            bail!("{votes}_ids has id {c}, but there are {n_targets} targets/classes");
        }
        distinct.insert(c);
        // a vote on a branch is ignored, as onnxruntime does (old converters
        // emitted some)
        if let Child::Leaf(l) = kind[i] {
            leaves[l].push((c, w));
        }
    }
    let weights_all_positive = !v_w.iter().any(|&w| w < 0.0);
    let base_values = floats_or_tensor(a, "base_values")?.unwrap_or_default();
    let aggregate = match a.string_checked("aggregate_function")? {
        None => Aggregate::Sum,
        Some(s) => match Aggregate::from_name(&s) {
            Some(g) => g,
            None => {
                bail!("attribute 'aggregate_function' must be SUM, AVERAGE, MIN or MAX, got '{s}'")
            }
        },
    };
    Ok(TreesV3 {
        graph: Graph {
            branches,
            leaves,
            roots,
            n_targets,
        },
        base_values,
        aggregate,
        post: PostTransform::decode(a)?,
        weights_all_positive,
        distinct_ids: distinct.len(),
    })
}
