//! `FeatureVectorizer`: concatenates the features of several inputs into
//! one float row per sample: input `i` (`[N, C_i]`, or `[C_i]` for one
//! sample) gives `inputdimensions[i]` columns, its first features, padded
//! with zeros when it has fewer.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use crate::value_type::Dim;

struct FeatureVectorizerAttrs {
    dims: Vec<usize>,
}

impl FeatureVectorizerAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let dims = a
            .ints_checked("inputdimensions")?
            .ok_or_else(|| KernelError::new("attribute 'inputdimensions' is required"))?;
        let dims = dims
            .iter()
            .map(|&d| {
                usize::try_from(d).map_err(|_| {
                    KernelError::new(format!(
                        "attribute 'inputdimensions' holds {d}; sizes must not be negative"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FeatureVectorizerAttrs { dims })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = FeatureVectorizerAttrs::decode(&cx.attrs)?;
    let width: usize = a.dims.iter().sum();
    let n: Dim = match cx.shape(0) {
        Some([_]) => Some(Expr::int(1)),
        Some([n, ..]) => n.clone(),
        _ => None,
    };
    cx.set_tensor(
        0,
        crate::tensor::DataType::Float,
        Some(vec![n, Some(Expr::int(width as i64))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = FeatureVectorizerAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        if ins.len() != a.dims.len() {
            bail!(
                "{} inputs but 'inputdimensions' has {} sizes",
                ins.len(),
                a.dims.len()
            );
        }
        let width: usize = a.dims.iter().sum();
        let mut n: Option<usize> = None;
        let mut parts: Vec<(usize, Vec<f64>)> = Vec::with_capacity(ins.len());
        for (i, v) in ins.iter().enumerate() {
            let Some(Value::Tensor(t)) = v else {
                bail!("input {i} must be a tensor");
            };
            let (rows, cols) = match t.shape() {
                [c] => (1, *c),
                [r, rest @ ..] => (*r, rest.iter().product()),
                [] => (1, 1),
            };
            match n {
                None => n = Some(rows),
                Some(m) if m != rows => {
                    bail!("input {i} has {rows} rows, input 0 has {m}")
                }
                _ => {}
            }
            let Some(vals) = t.to_f64_vec() else {
                bail!("input {i} must be numeric, got {}", t.dtype());
            };
            parts.push((cols, vals));
        }
        let n = n.unwrap_or(0);
        crate::tensor::budget::check(&[n, width], 4)?;
        let mut out = vec![0f32; n * width];
        let mut offset = 0;
        for ((cols, vals), &dim) in parts.iter().zip(&a.dims) {
            let take = (*cols).min(dim);
            for r in 0..n {
                for c in 0..take {
                    out[r * width + offset + c] = vals[r * cols + c] as f32;
                }
            }
            offset += dim;
        }
        Ok(vec![Value::Tensor(Tensor::from_vec(&[n, width], out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::super::test_node::{ints, run};
    use crate::tensor::Tensor;

    #[test]
    fn inputs_are_concatenated_truncated_and_padded() {
        let a = Tensor::from_vec(&[2, 3], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
        let b = Tensor::from_vec(&[2, 1], vec![0.5f64, 1.5]).unwrap();
        let out = run(
            "FeatureVectorizer",
            vec![ints("inputdimensions", &[2, 2])],
            vec![a, b],
        )
        .unwrap();
        assert_eq!(out[0].shape(), &[2, 4]);
        assert_eq!(
            out[0].to_f64_vec().unwrap(),
            vec![1., 2., 0.5, 0., 4., 5., 1.5, 0.]
        );
        let a = Tensor::from_vec(&[2, 1], vec![1f32, 2.]).unwrap();
        let b = Tensor::from_vec(&[3, 1], vec![1f32, 2., 3.]).unwrap();
        let e = run(
            "FeatureVectorizer",
            vec![ints("inputdimensions", &[1, 1])],
            vec![a, b],
        )
        .unwrap_err();
        assert!(e.contains("input 1 has 3 rows, input 0 has 2"), "{e}");
    }
}
