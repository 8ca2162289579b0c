//! `TreeEnsembleRegressor` (ai.onnx.ml 1 and 3): `Y[N, n_targets]` float,
//! the leaf weights of every tree aggregated per target (SUM, AVERAGE, MIN,
//! MAX), plus `base_values`, then `post_transform`, as onnxruntime computes
//! it.

use super::features::row_count;
use super::forest::{check_features, finish_regression, rows_as, Forest, Real};
use super::tree_nodes_v3::{decode, TreesV3};
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
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
