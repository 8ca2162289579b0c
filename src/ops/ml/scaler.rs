//! `Scaler`: `(X - offset) * scale` per feature (one value for all features,
//! or one per feature); `Y` is float of `X`'s shape.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

struct ScalerAttrs {
    offset: Vec<f64>,
    scale: Vec<f64>,
}

fn floats(a: &Attrs, name: &str) -> Result<Vec<f64>, KernelError> {
    Ok(a.floats_f64_checked(name)?.unwrap_or_default())
}

impl ScalerAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        Ok(ScalerAttrs {
            offset: floats(a, "offset")?,
            scale: floats(a, "scale")?,
        })
    }
}

/// The value of a per-feature attribute for feature `j`: empty gives
/// `default`, one value applies to all features.
fn per_feature(v: &[f64], j: usize, default: f64) -> f64 {
    match v {
        [] => default,
        [one] => *one,
        many => many[j],
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, DataType::Float, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = ScalerAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let c = x.shape().last().copied().unwrap_or(1);
        for (name, v) in [("offset", &a.offset), ("scale", &a.scale)] {
            if v.len() > 1 && v.len() != c {
                bail!(
                    "attribute '{name}' has {} values; expected 1 or one per feature ({c})",
                    v.len()
                );
            }
        }
        let Some(v) = x.to_f64_vec() else {
            bail!("X must be numeric, got {}", x.dtype());
        };
        let out: Vec<f32> = v
            .iter()
            .enumerate()
            .map(|(i, &e)| {
                let j = if c == 0 { 0 } else { i % c };
                ((e - per_feature(&a.offset, j, 0.0)) * per_feature(&a.scale, j, 1.0)) as f32
            })
            .collect();
        Ok(vec![Value::Tensor(Tensor::from_vec(x.shape(), out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{floats, run};

    #[test]
    fn per_feature_and_broadcast_values() {
        let attrs = vec![floats("offset", &[1.0, 2.0]), floats("scale", &[2.0])];
        let x = Tensor::from_vec(&[2, 2], vec![1.0f64, 4.0, 3.0, 0.0]).unwrap();
        let out = run("Scaler", attrs.clone(), vec![x]).unwrap();
        assert_eq!(
            out[0],
            Tensor::from_vec(&[2, 2], vec![0.0f32, 4.0, 4.0, -4.0]).unwrap()
        );
        let x3 = Tensor::from_vec(&[1, 3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let err = run("Scaler", attrs, vec![x3]).unwrap_err();
        assert!(err.contains("offset"), "{err}");
    }
}
