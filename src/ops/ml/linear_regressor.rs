//! `LinearRegressor`: `targets` outputs per row, `X · coefficientsᵀ +
//! intercepts`, then `post_transform`; `Y` is float `[N, targets]`.

use super::features::{row_count, rows};
use super::post_transform::PostTransform;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

struct LinearRegressorAttrs {
    coefficients: Vec<f64>,
    intercepts: Vec<f64>,
    targets: usize,
    post: PostTransform,
}

impl LinearRegressorAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let coefficients: Vec<f64> = a.floats_f64_checked("coefficients")?.unwrap_or_default();
        let intercepts: Vec<f64> = a.floats_f64_checked("intercepts")?.unwrap_or_default();
        let targets = a.int_checked("targets")?.unwrap_or(1);
        if targets < 1 || targets as usize > coefficients.len().max(1) {
            bail!(
                "attribute 'targets' must be between 1 and the number of coefficients ({}), got {targets}",
                coefficients.len()
            );
        }
        let targets = targets as usize;
        if !intercepts.is_empty() && intercepts.len() != targets {
            bail!(
                "attribute 'intercepts' has {} values, expected one per target ({targets})",
                intercepts.len()
            );
        }
        Ok(LinearRegressorAttrs {
            coefficients,
            intercepts,
            targets,
            post: PostTransform::decode(a)?,
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = LinearRegressorAttrs::decode(&cx.attrs).map_err(|e| ShapeError::new(e.to_string()))?;
    let n = row_count(cx, 0);
    cx.set_tensor(
        0,
        DataType::Float,
        n.map(|n| vec![n, Some(Expr::int(a.targets as i64))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = LinearRegressorAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = rows(tensor_in(ins, 0)?, "X")?;
        let t = a.targets;
        if a.coefficients.len() != t * x.c {
            bail!(
                "attribute 'coefficients' has {} values, expected {t} targets × {} features",
                a.coefficients.len(),
                x.c
            );
        }
        let mut out = Vec::with_capacity(x.n * t);
        let mut row = vec![0.0; t];
        for i in 0..x.n {
            let r = x.row(i);
            for (j, s) in row.iter_mut().enumerate() {
                let w = &a.coefficients[j * x.c..(j + 1) * x.c];
                *s = r.iter().zip(w).map(|(v, w)| v * w).sum::<f64>()
                    + a.intercepts.get(j).copied().unwrap_or(0.0);
            }
            a.post.apply(&mut row);
            out.extend(row.iter().map(|&v| v as f32));
        }
        Ok(vec![Value::Tensor(Tensor::from_vec(&[x.n, t], out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{floats, int, run};

    #[test]
    fn two_targets_with_intercepts() {
        let attrs = vec![
            floats("coefficients", &[1.0, 2.0, -1.0, 0.5]),
            floats("intercepts", &[1.0, 0.0]),
            int("targets", 2),
        ];
        let x = Tensor::from_vec(&[1, 2], vec![3i64, 4]).unwrap();
        let out = run("LinearRegressor", attrs.clone(), vec![x]).unwrap();
        assert_eq!(
            out[0],
            Tensor::from_vec(&[1, 2], vec![12.0f32, -1.0]).unwrap()
        );
        let bad = Tensor::from_vec(&[1, 3], vec![3i64, 4, 5]).unwrap();
        let err = run("LinearRegressor", attrs, vec![bad]).unwrap_err();
        assert!(err.contains("coefficients"), "{err}");
        let err = run(
            "LinearRegressor",
            vec![floats("coefficients", &[1.0]), int("targets", 3)],
            vec![],
        )
        .unwrap_err();
        assert!(err.contains("targets"), "{err}");
    }
}
