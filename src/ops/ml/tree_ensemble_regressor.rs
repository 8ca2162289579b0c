//! `TreeEnsembleRegressor` (ai.onnx.ml 1 and 3): `Y[N, n_targets]` float,
//! the leaf weights of every tree aggregated per target (SUM, AVERAGE, MIN,
//! MAX), plus `base_values`, then `post_transform`, as onnxruntime computes
//! it.

use super::features::row_count;
use super::forest::{check_features, finish_regression, rows_as, Forest, Real};
use super::tree_nodes_v3::{decode, TreesV3};
use crate::bail;
use crate::expr::Expr;
use crate::ops::Attrs;
use crate::runtime::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::shape::{InferCtx, ShapeError};
use crate::tensor::{budget, DataType, Tensor, Value};
use std::sync::{Arc, OnceLock};

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

struct Regressor {
    trees: TreesV3,
    /// Thresholds and weights in f32 (float and integer inputs).
    f32: Forest<f32>,
    /// The same in f64, built on the first double input.
    f64: OnceLock<Result<Forest<f64>, KernelError>>,
}

impl Regressor {
    fn run<T: Real>(&self, forest: &Forest<T>, x: &Tensor) -> Result<Tensor, KernelError> {
        let (data, n, c) = rows_as::<T>(x)?;
        check_features(forest.max_feature, c)?;
        let width = forest.n_targets;
        budget::check(&[n, width], 8)?;
        let base: Vec<T> = self
            .trees
            .base_values
            .iter()
            .map(|&v| T::from_f64(v))
            .collect();
        let (agg, post, n_trees) = (self.trees.aggregate, self.trees.post, forest.n_trees());
        let (out, _) = forest.run(agg, &data, n, c, width, |v, o: &mut [f64]| {
            finish_regression(agg, n_trees, &base, post, v, o);
            0
        });
        let out: Vec<f32> = out.into_iter().map(|v| v as f32).collect();
        Ok(Tensor::from_vec(&[n, width], out)?)
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = n_targets(&cx.attrs).ok().map(|n| Expr::int(n as i64));
    let n = row_count(cx, 0).flatten();
    cx.set_tensor(0, DataType::Float, Some(vec![n, e]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let n = n_targets(&info.attrs)?;
    let trees = decode(&info.attrs, "target", n)?;
    if !trees.base_values.is_empty() && trees.base_values.len() != n {
        bail!(
            "attribute 'base_values' has {} values: it must have none or n_targets ({n})",
            trees.base_values.len()
        );
    }
    let f32 = trees.graph.flatten::<f32>()?;
    let r = Arc::new(Regressor {
        trees,
        f32,
        f64: OnceLock::new(),
    });
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let y = match x.dtype() {
            DataType::Double => {
                let f = r.f64.get_or_init(|| r.trees.graph.flatten::<f64>());
                match f {
                    Ok(f) => r.run(f, x)?,
                    Err(e) => return Err(e.clone()),
                }
            }
            DataType::Float | DataType::Int64 | DataType::Int32 => r.run(&r.f32, x)?,
            t => bail!("X must be float, double, int64 or int32, got {t}"),
        };
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {
    use super::super::forest::testing::{output_types, run_text};
    use crate::tensor::Tensor;

    /// Two trees: `x0 <= 1.5` (NaN goes true) → 10 / 20, and `x1 > 0` →
    /// 1 / 2; `extra` is spliced into the attributes.
    fn model(extra: &str, out: &str) -> String {
        format!(
            r#"<ir_version: 10, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
g (float[N,2] x) => ({out} y)
{{
  y = ai.onnx.ml.TreeEnsembleRegressor <nodes_treeids = [0, 0, 0, 1, 1, 1],
    nodes_nodeids = [0, 1, 2, 0, 1, 2], nodes_featureids = [0, 0, 0, 1, 0, 0],
    nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
    nodes_values = [1.5, 0.0, 0.0, 0.0, 0.0, 0.0],
    nodes_missing_value_tracks_true = [1, 0, 0, 0, 0, 0],
    nodes_truenodeids = [1, 0, 0, 1, 0, 0], nodes_falsenodeids = [2, 0, 0, 2, 0, 0],
    target_nodeids = [1, 2, 1, 2], target_treeids = [0, 0, 1, 1],
    target_weights = [10.0, 20.0, 1.0, 2.0], {extra}> (x)
}}"#
        )
    }

    fn x() -> Tensor {
        let v = vec![1.0f32, 1.0, 2.0, -1.0, f32::NAN, f32::NAN];
        Tensor::from_vec(&[3, 2], v).unwrap()
    }

    fn values(t: &Tensor) -> Vec<f64> {
        t.to_f64_vec().unwrap()
    }

    #[test]
    fn sums_trees_with_a_double_base_value_and_missing_tracks() {
        let m = model(
            "n_targets = 1, target_ids = [0, 0, 0, 0], base_values_as_tensor = double[1] {0.5}",
            "float[N,1]",
        );
        let y = run_text(&m, x()).unwrap();
        assert_eq!(y[0].shape(), &[3, 1]);
        assert_eq!(values(&y[0]), vec![11.5, 22.5, 12.5]);
        assert_eq!(output_types(&m), vec!["float[N,1]"]);
    }

    #[test]
    fn average_min_max_over_two_targets() {
        // tree 0 votes target 0, tree 1 target 1; base values per target
        let t = "n_targets = 2, target_ids = [0, 0, 1, 1], base_values = [100.0, 200.0]";
        let avg = model(
            &format!("{t}, aggregate_function = \"AVERAGE\""),
            "float[N,2]",
        );
        let y = run_text(&avg, x()).unwrap();
        assert_eq!(
            values(&y[0]),
            vec![105.0, 200.5, 110.0, 201.0, 105.0, 201.0]
        );
        let min = model(&format!("{t}, aggregate_function = \"MIN\""), "float[N,2]");
        let y = run_text(&min, x()).unwrap();
        assert_eq!(
            values(&y[0]),
            vec![110.0, 201.0, 120.0, 202.0, 110.0, 202.0]
        );
        assert_eq!(output_types(&min), vec!["float[N,2]"]);
    }

    #[test]
    fn one_target_ignores_logistic_as_onnxruntime_does_but_two_apply_it() {
        let one = model(
            "n_targets = 1, target_ids = [0, 0, 0, 0], post_transform = \"LOGISTIC\"",
            "float[N,1]",
        );
        assert_eq!(
            values(&run_text(&one, x()).unwrap()[0]),
            vec![11.0, 22.0, 12.0]
        );
        let two = model(
            "n_targets = 2, target_ids = [0, 0, 1, 1], post_transform = \"LOGISTIC\"",
            "float[N,2]",
        );
        let y = values(&run_text(&two, x()).unwrap()[0]);
        let want = super::super::post_transform::logistic(1.0);
        assert!((y[1] - want).abs() < 1e-6, "{y:?}");
    }

    #[test]
    fn malformed_ensembles_are_errors() {
        let bad_child = model("n_targets = 1, target_ids = [0, 0, 0, 0]", "float[N,1]").replace(
            "nodes_falsenodeids = [2, 0, 0, 2",
            "nodes_falsenodeids = [7, 0, 0, 2",
        );
        let e = run_text(&bad_child, x()).unwrap_err();
        assert!(e.contains("false child 7"), "{e}");
        // node 1 of tree 0 becomes a branch back to the root: a cycle
        let cycle = model("n_targets = 1, target_ids = [0, 0, 0, 0]", "float[N,1]")
            .replace("\"BRANCH_LEQ\", \"LEAF\"", "\"BRANCH_LEQ\", \"BRANCH_LEQ\"");
        let e = run_text(&cycle, x()).unwrap_err();
        assert!(e.contains("reached twice"), "{e}");
        let bad_target = model("n_targets = 1, target_ids = [0, 0, 3, 0]", "float[N,1]");
        let e = run_text(&bad_target, x()).unwrap_err();
        assert!(e.contains("id 3"), "{e}");
        let one_feature = Tensor::from_vec(&[1, 1], vec![1.0f32]).unwrap();
        let ok = model("n_targets = 1, target_ids = [0, 0, 0, 0]", "float[N,1]")
            .replace("float[N,2] x", "float[N,C] x");
        let e = run_text(&ok, one_feature).unwrap_err();
        assert!(e.contains("feature 1"), "{e}");
        let missing = model("target_ids = [0, 0, 0, 0]", "float[N,1]");
        assert!(run_text(&missing, x()).unwrap_err().contains("n_targets"));
    }
}
