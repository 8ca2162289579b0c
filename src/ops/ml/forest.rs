//! The flattened tree ensemble shared by `TreeEnsembleClassifier`,
//! `TreeEnsembleRegressor` (ai.onnx.ml 1 and 3) and `TreeEnsemble` (5).
//!
//! Each operator decodes its attributes into a [`Graph`] (branches, leaves,
//! roots, by index), and [`Graph::flatten`] turns it once, at kernel build
//! time, into a [`Forest`]: every tree laid out depth-first in one node
//! array, every child index checked and strictly after its parent, so that
//! a walk always ends at a leaf within the tree's size (a cycle or a branch
//! reached twice is refused at build time). Thresholds and leaf weights are
//! held in the type onnxruntime compares and sums them in (`f32` unless the
//! input is `double`), so scores agree with it to the last bit on one thread.

use super::features::rows;
use super::post_transform::{probit, PostTransform};
use crate::bail;
use crate::ops::KernelError;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// A threshold / score type: `f32` or `f64`.
pub trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::fmt::Debug
    + 'static
{
    const ZERO: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn is_nan(self) -> bool;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// How a branch compares feature `x` with its threshold `t`; the true
/// branch is taken when the comparison holds (or, with the missing-value
/// track set, when `x` is NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Leq,
    Lt,
    Gte,
    Gt,
    Eq,
    /// `x != t`: a NaN `x` is not equal, so it goes to the true branch.
    Neq,
    /// `x` is one of a set of values (TreeEnsemble opset 5).
    Member,
    Leaf,
}

impl Mode {
    /// The opset 1/3 string form (`nodes_modes`).
    pub fn from_name(s: &str) -> Option<Mode> {
        Some(match s {
            "BRANCH_LEQ" => Mode::Leq,
            "BRANCH_LT" => Mode::Lt,
            "BRANCH_GTE" => Mode::Gte,
            "BRANCH_GT" => Mode::Gt,
            "BRANCH_EQ" => Mode::Eq,
            "BRANCH_NEQ" => Mode::Neq,
            "LEAF" => Mode::Leaf,
            _ => return None,
        })
    }

    /// The opset 5 code (`nodes_modes`, uint8).
    pub fn from_code(c: i64) -> Option<Mode> {
        Some(match c {
            0 => Mode::Leq,
            1 => Mode::Lt,
            2 => Mode::Gte,
            3 => Mode::Gt,
            4 => Mode::Eq,
            5 => Mode::Neq,
            6 => Mode::Member,
            _ => return None,
        })
    }
}

/// How leaf weights of one target combine across trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    Sum,
    Average,
    Min,
    Max,
}

impl Aggregate {
    pub fn from_name(s: &str) -> Option<Aggregate> {
        Some(match s {
            "SUM" => Aggregate::Sum,
            "AVERAGE" => Aggregate::Average,
            "MIN" => Aggregate::Min,
            "MAX" => Aggregate::Max,
            _ => return None,
        })
    }

    pub fn from_code(c: i64) -> Option<Aggregate> {
        Some(match c {
            0 => Aggregate::Average,
            1 => Aggregate::Sum,
            2 => Aggregate::Min,
            3 => Aggregate::Max,
            _ => return None,
        })
    }
}

/// Where a branch leads: another branch or a leaf, by index in [`Graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Child {
    Branch(usize),
    Leaf(usize),
}

/// One decision node as decoded from the attributes.
#[derive(Clone, Debug)]
pub struct Branch {
    pub feature: i64,
    pub mode: Mode,
    pub threshold: f64,
    /// The members of a [`Mode::Member`] branch.
    pub members: Vec<f64>,
    pub missing_true: bool,
    pub on_true: Child,
    pub on_false: Child,
}

/// An ensemble as decoded from the attributes, before flattening.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub branches: Vec<Branch>,
    /// The `(target, weight)` votes of each leaf.
    pub leaves: Vec<Vec<(usize, f64)>>,
    pub roots: Vec<Child>,
    pub n_targets: usize,
}

#[derive(Clone, Copy, Debug)]
struct Node<T> {
    threshold: T,
    feature: u32,
    /// Branch: the true child. Leaf: the first weight.
    a: u32,
    /// Branch: the false child. Leaf: the number of weights.
    b: u32,
    /// Member branch: its set in `Forest::sets`.
    set: u32,
    mode: Mode,
    missing_true: bool,
}

/// A node of a forest whose branches are all `Leq` without missing-value
/// tracks, in 16 bytes (`f32`): the child is `c[!(x <= t)]`; a leaf has
/// `f == LEAF` and its weights at `c[0]`, `c[1]` of them.
#[derive(Clone, Copy, Debug)]
struct Fast<T> {
    t: T,
    f: u32,
    c: [u32; 2],
}

const LEAF: u32 = u32::MAX;

/// A flattened, validated ensemble.
#[derive(Debug)]
pub struct Forest<T> {
    nodes: Vec<Node<T>>,
    weights: Vec<(u32, T)>,
    roots: Vec<u32>,
    sets: Vec<Vec<T>>,
    pub n_targets: usize,
    /// The largest feature index a branch reads (`None`: no branches).
    pub max_feature: Option<usize>,
    /// When every branch is `Leq` without a missing-value track (the
    /// usual scikit-learn case), the nodes in compact form; else empty.
    fast: Vec<Fast<T>>,
}

fn index_u32(v: usize, what: &str) -> Result<u32, KernelError> {
    u32::try_from(v).map_err(|_| KernelError::new(format!("{what} {v} is too large")))
}

impl Graph {
    /// Lays the trees out depth-first, checking every index. A branch
    /// reached twice (a cycle, or a node shared between trees or parents)
    /// is an error; a leaf may be shared.
    pub fn flatten<T: Real>(&self) -> Result<Forest<T>, KernelError> {
        if self.n_targets == 0 {
            bail!("the ensemble must have at least one target or class");
        }
        if self.roots.is_empty() {
            bail!("the ensemble has no trees");
        }
        let mut weights = Vec::new();
        let mut leaf_at = Vec::with_capacity(self.leaves.len());
        for (i, votes) in self.leaves.iter().enumerate() {
            let first = index_u32(weights.len(), "weight index")?;
            for &(t, w) in votes {
                if t >= self.n_targets {
                    bail!(
                        "leaf {i} votes for target/class {t}, but there are only {}",
                        self.n_targets
                    );
                }
                weights.push((t as u32, T::from_f64(w)));
            }
            leaf_at.push((first, index_u32(votes.len(), "vote count")?));
        }
        let mut nodes: Vec<Node<T>> = Vec::with_capacity(self.branches.len() + self.leaves.len());
        let mut sets = Vec::new();
        let mut seen = vec![false; self.branches.len()];
        let mut roots = Vec::with_capacity(self.roots.len());
        let mut max_feature: Option<usize> = None;
        let mut all_leq = true;
        // (child, index of the parent slot to patch, true side?)
        let mut stack: Vec<(Child, Option<(usize, bool)>)> = Vec::new();
        for &root in &self.roots {
            roots.push(index_u32(nodes.len(), "node index")?);
            stack.push((root, None));
            while let Some((c, parent)) = stack.pop() {
                let at = index_u32(nodes.len(), "node index")?;
                if let Some((p, side)) = parent {
                    if let Some(pn) = nodes.get_mut(p) {
                        if side {
                            pn.a = at;
                        } else {
                            pn.b = at;
                        }
                    }
                }
                match c {
                    Child::Leaf(l) => {
                        let Some(&(first, count)) = leaf_at.get(l) else {
                            bail!(
                                "leaf index {l} is out of range ({} leaves)",
                                self.leaves.len()
                            );
                        };
                        nodes.push(Node {
                            threshold: T::ZERO,
                            feature: 0,
                            a: first,
                            b: count,
                            set: 0,
                            mode: Mode::Leaf,
                            missing_true: false,
                        });
                    }
                    Child::Branch(i) => {
                        let Some(br) = self.branches.get(i) else {
                            bail!(
                                "node index {i} is out of range ({} nodes)",
                                self.branches.len()
                            );
                        };
                        if std::mem::replace(&mut seen[i], true) {
                            bail!("node {i} is reached twice (a cycle, or a node shared by two parents or trees)");
                        }
                        if br.mode == Mode::Leaf {
                            bail!("node {i} is a leaf but is decoded as a branch");
                        }
                        let Ok(feature) = usize::try_from(br.feature) else {
                            bail!("node {i} reads feature {}, which is negative", br.feature);
                        };
                        let feature_u32 = index_u32(feature, "feature index")?;
                        max_feature = Some(max_feature.map_or(feature, |m| m.max(feature)));
                        let mut set = 0;
                        if br.mode == Mode::Member {
                            set = index_u32(sets.len(), "set index")?;
                            let mut members: Vec<T> =
                                br.members.iter().map(|&v| T::from_f64(v)).collect();
                            members.sort_by(|a, b| {
                                a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal)
                            });
                            sets.push(members);
                        }
                        if br.mode != Mode::Leq || br.missing_true {
                            all_leq = false;
                        }
                        let slot = nodes.len();
                        nodes.push(Node {
                            threshold: T::from_f64(br.threshold),
                            feature: feature_u32,
                            a: 0,
                            b: 0,
                            set,
                            mode: br.mode,
                            missing_true: br.missing_true,
                        });
                        // the false side is laid out second (pushed first)
                        stack.push((br.on_false, Some((slot, false))));
                        stack.push((br.on_true, Some((slot, true))));
                    }
                }
            }
        }
        let fast = if all_leq {
            nodes
                .iter()
                .map(|n| Fast {
                    t: n.threshold,
                    f: if n.mode == Mode::Leaf {
                        LEAF
                    } else {
                        n.feature
                    },
                    c: [n.a, n.b],
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(Forest {
            nodes,
            weights,
            roots,
            sets,
            n_targets: self.n_targets,
            max_feature,
            fast,
        })
    }
}

/// The running votes of one row: a score and whether any leaf voted, per
/// target.
pub struct Votes<T> {
    pub score: Vec<T>,
    pub has: Vec<bool>,
}

impl<T: Real> Forest<T> {
    pub fn n_trees(&self) -> usize {
        self.roots.len()
    }

    /// The leaf that row `x` reaches from `root`. Children always lie after
    /// their parent, so the walk ends within the node count.
    #[inline]
    fn leaf(&self, root: u32, x: &[T]) -> &Node<T> {
        let mut i = root as usize;
        loop {
            let n = &self.nodes[i];
            if n.mode == Mode::Leaf {
                return n;
            }
            let v = x[n.feature as usize];
            let cond = match n.mode {
                Mode::Leaf => true,
                Mode::Leq => v <= n.threshold,
                Mode::Lt => v < n.threshold,
                Mode::Gte => v >= n.threshold,
                Mode::Gt => v > n.threshold,
                Mode::Eq => v == n.threshold,
                Mode::Neq => v != n.threshold,
                Mode::Member => self.sets[n.set as usize]
                    .binary_search_by(|m| m.partial_cmp(&v).unwrap_or(std::cmp::Ordering::Less))
                    .is_ok(),
            } || (n.missing_true && v.is_nan());
            i = if cond { n.a } else { n.b } as usize;
        }
    }

    /// Walks `L` rows (`x` holds them, `c` features each) down the tree at
    /// `root` in lockstep on the compact nodes, so that their independent
    /// chains of loads overlap; returns each row's leaf.
    #[inline]
    fn fast_leaves<const L: usize>(&self, root: u32, x: &[T], c: usize) -> [usize; L] {
        let mut at = [root as usize; L];
        loop {
            let mut moving = false;
            for (l, i) in at.iter_mut().enumerate() {
                let n = &self.fast[*i];
                if n.f != LEAF {
                    let v = x[l * c + n.f as usize];
                    // the false child (index 1) unless `v <= t`; NaN goes false
                    let go_true = v <= n.t;
                    *i = n.c[usize::from(!go_true)] as usize;
                    moving = true;
                }
            }
            if !moving {
                return at;
            }
        }
    }

    fn vote(&self, agg: Aggregate, leaf: &Node<T>, votes: &mut Votes<T>) {
        self.vote_at(agg, leaf.a, leaf.b, votes)
    }

    fn vote_at(&self, agg: Aggregate, first: u32, count: u32, votes: &mut Votes<T>) {
        let first = first as usize;
        let Some(ws) = self.weights.get(first..first + count as usize) else {
            return;
        };
        for &(t, w) in ws {
            let t = t as usize;
            let s = &mut votes.score[t];
            let h = &mut votes.has[t];
            match agg {
                Aggregate::Sum | Aggregate::Average => *s = *s + w,
                Aggregate::Min => {
                    if !*h || w < *s {
                        *s = w
                    }
                }
                Aggregate::Max => {
                    if !*h || w > *s {
                        *s = w
                    }
                }
            }
            *h = true;
        }
    }

    /// Evaluates every row of `x` (`n` rows of `c` features, `c` already
    /// checked against [`Forest::max_feature`]) and hands each row's votes
    /// to `finish`, which writes `width` outputs and returns a label.
    /// Blocks of rows run in parallel when there are many.
    pub fn run<O, F>(
        &self,
        agg: Aggregate,
        x: &[T],
        n: usize,
        c: usize,
        width: usize,
        finish: F,
    ) -> (Vec<O>, Vec<i64>)
    where
        O: Copy + Default + Send,
        F: Fn(&mut Votes<T>, &mut [O]) -> i64 + Sync,
    {
        const BLOCK: usize = 128;
        let mut out = vec![O::default(); n * width];
        let mut labels = vec![0i64; n];
        let block = |row0: usize, out: &mut [O], labels: &mut [i64]| {
            let rows = labels.len();
            let mut votes: Vec<Votes<T>> = (0..rows)
                .map(|_| Votes {
                    score: vec![T::ZERO; self.n_targets],
                    has: vec![false; self.n_targets],
                })
                .collect();
            const LANES: usize = 8;
            let xs = &x[row0 * c..(row0 + rows) * c];
            for &root in &self.roots {
                let mut r = 0;
                if !self.fast.is_empty() {
                    while r + LANES <= rows {
                        let leaves = self.fast_leaves::<LANES>(root, &xs[r * c..], c);
                        for (l, &i) in leaves.iter().enumerate() {
                            let n = &self.fast[i];
                            self.vote_at(agg, n.c[0], n.c[1], &mut votes[r + l]);
                        }
                        r += LANES;
                    }
                }
                for (k, v) in votes.iter_mut().enumerate().skip(r) {
                    self.vote(agg, self.leaf(root, &xs[k * c..(k + 1) * c]), v);
                }
            }
            for (r, v) in votes.iter_mut().enumerate() {
                labels[r] = finish(v, &mut out[r * width..(r + 1) * width]);
            }
        };
        if width == 0 {
            return (out, labels);
        }
        if n >= 2 * BLOCK && crate::ops::kernels::threads::current() > 1 {
            out.par_chunks_mut(BLOCK * width)
                .zip(labels.par_chunks_mut(BLOCK))
                .enumerate()
                .for_each(|(b, (o, l))| block(b * BLOCK, o, l));
        } else {
            for (b, (o, l)) in out
                .chunks_mut(BLOCK * width)
                .zip(labels.chunks_mut(BLOCK))
                .enumerate()
            {
                block(b * BLOCK, o, l);
            }
        }
        (out, labels)
    }
}

/// The final scores of one regression row (`TreeEnsembleRegressor`,
/// `TreeEnsemble`) as onnxruntime forms them: with one target, `base`
/// counts when it has one value and only PROBIT is applied; with more,
/// `base` counts when it has one value per target and the post transform
/// applies to the row.
pub fn finish_regression<T: Real>(
    agg: Aggregate,
    n_trees: usize,
    base: &[T],
    post: PostTransform,
    v: &Votes<T>,
    out: &mut [f64],
) {
    let trees = T::from_f64(n_trees as f64);
    if let ([s], [h], [o]) = (&v.score[..], &v.has[..], &mut out[..]) {
        let origin = if base.len() == 1 { base[0] } else { T::ZERO };
        let y = match agg {
            Aggregate::Sum => *s + origin,
            Aggregate::Average => *s / trees + origin,
            Aggregate::Min | Aggregate::Max if *h => *s + origin,
            Aggregate::Min | Aggregate::Max => origin,
        };
        *o = if post == PostTransform::Probit {
            probit(y.to_f64())
        } else {
            y.to_f64()
        };
        return;
    }
    let use_base = base.len() == out.len();
    for (j, o) in out.iter_mut().enumerate() {
        let b = if use_base { base[j] } else { T::ZERO };
        let s = v.score[j];
        let y = match agg {
            Aggregate::Sum => s + b,
            Aggregate::Average => s / trees + b,
            Aggregate::Min | Aggregate::Max => b + if v.has[j] { s } else { T::ZERO },
        };
        *o = y.to_f64();
    }
    post.apply(out);
}

/// `X` (rank 1 or 2, any numeric type) as rows of `T`: `(data, n, c)`.
/// Integers become `f32` as onnxruntime compares them.
pub fn rows_as<T: Real>(x: &Tensor) -> Result<(Vec<T>, usize, usize), KernelError> {
    let r = rows(x, "X")?;
    let data = r.data.iter().map(|&v| T::from_f64(v)).collect();
    Ok((data, r.n, r.c))
}

/// Checks that `x` has the features the forest reads.
pub fn check_features(max_feature: Option<usize>, c: usize) -> Result<(), KernelError> {
    if let Some(m) = max_feature {
        if m >= c {
            bail!("the trees read feature {m}, but X has {c} features per row");
        }
    }
    Ok(())
}

/// The values of a numeric tensor attribute (`*_as_tensor`,
/// `nodes_splits`, ...) as f64, with whether they were double.
pub fn tensor_values(
    attrs: &crate::ops::Attrs,
    name: &str,
) -> Result<Option<(Vec<f64>, bool)>, KernelError> {
    let Some(p) = attrs.tensor_checked(name)? else {
        return Ok(None);
    };
    let t = crate::proto::from_proto(p)
        .map_err(|e| KernelError::new(format!("attribute '{name}': {e}")))?;
    let Some(v) = t.to_f64_vec() else {
        bail!(
            "attribute '{name}' must be a numeric tensor, got {}",
            t.dtype()
        );
    };
    Ok(Some((v, t.dtype() == crate::tensor::DataType::Double)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leq(feature: i64, t: f64, on_true: Child, on_false: Child) -> Branch {
        Branch {
            feature,
            mode: Mode::Leq,
            threshold: t,
            members: vec![],
            missing_true: false,
            on_true,
            on_false,
        }
    }

    #[test]
    fn a_cycle_is_refused_at_build_time() {
        let g = Graph {
            branches: vec![
                leq(0, 1.0, Child::Branch(1), Child::Leaf(0)),
                leq(0, 2.0, Child::Branch(0), Child::Leaf(0)),
            ],
            leaves: vec![vec![(0, 1.0)]],
            roots: vec![Child::Branch(0)],
            n_targets: 1,
        };
        let e = g.flatten::<f32>().unwrap_err();
        assert!(e.to_string().contains("reached twice"), "{e}");
    }

    #[test]
    fn out_of_range_children_and_targets_are_refused() {
        let mut g = Graph {
            branches: vec![leq(0, 1.0, Child::Leaf(0), Child::Leaf(5))],
            leaves: vec![vec![(0, 1.0)]],
            roots: vec![Child::Branch(0)],
            n_targets: 1,
        };
        assert!(g
            .flatten::<f32>()
            .unwrap_err()
            .to_string()
            .contains("leaf index 5"));
        g.branches[0].on_false = Child::Branch(9);
        assert!(g
            .flatten::<f32>()
            .unwrap_err()
            .to_string()
            .contains("node index 9"));
        g.branches[0].on_false = Child::Leaf(0);
        g.leaves[0] = vec![(3, 1.0)];
        assert!(g
            .flatten::<f32>()
            .unwrap_err()
            .to_string()
            .contains("target/class 3"));
        g.leaves[0] = vec![(0, 1.0)];
        g.branches[0].feature = -1;
        assert!(g
            .flatten::<f32>()
            .unwrap_err()
            .to_string()
            .contains("negative"));
    }

    #[test]
    fn walks_follow_modes_and_missing_tracks() {
        // x0 <= 1 ? (x1 in {2, 5} ? leaf0 : leaf1) : leaf2; NaN x0 goes true
        let mut root = leq(0, 1.0, Child::Branch(1), Child::Leaf(2));
        root.missing_true = true;
        let member = Branch {
            feature: 1,
            mode: Mode::Member,
            threshold: 0.0,
            members: vec![5.0, 2.0],
            missing_true: false,
            on_true: Child::Leaf(0),
            on_false: Child::Leaf(1),
        };
        let g = Graph {
            branches: vec![root, member],
            leaves: vec![vec![(0, 10.0)], vec![(0, 20.0)], vec![(1, 30.0)]],
            roots: vec![Child::Branch(0)],
            n_targets: 2,
        };
        let f = g.flatten::<f64>().unwrap();
        let x = [0.5, 5.0, 0.5, 3.0, 2.0, 2.0, f64::NAN, 2.0, 0.0, f64::NAN];
        let (out, _) = f.run(Aggregate::Sum, &x, 5, 2, 2, |v, o: &mut [f64]| {
            o[0] = v.score[0];
            o[1] = v.score[1];
            0
        });
        assert_eq!(
            out,
            vec![10.0, 0.0, 20.0, 0.0, 0.0, 30.0, 10.0, 0.0, 20.0, 0.0]
        );
    }
}
