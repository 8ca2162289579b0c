//! `Normalizer`: divides each row by its MAX (largest value), L1 (sum of
//! absolute values) or L2 (Euclidean) norm; a row whose norm is 0 is kept.
//! `Y` is float of `X`'s shape.

use super::features::rows;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

#[derive(Clone, Copy)]
enum Norm {
    Max,
    L1,
    L2,
}

struct NormalizerAttrs {
    norm: Norm,
}

impl NormalizerAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let s = a.string_checked("norm")?.unwrap_or_else(|| "MAX".into());
        let norm = match s.as_str() {
            "MAX" => Norm::Max,
            "L1" => Norm::L1,
            "L2" => Norm::L2,
            other => bail!("attribute 'norm' must be MAX, L1 or L2, got '{other}'"),
        };
        Ok(NormalizerAttrs { norm })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    NormalizerAttrs::decode(&cx.attrs).map_err(|e| ShapeError::new(e.to_string()))?;
    let s = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, DataType::Float, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = NormalizerAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let xt = tensor_in(ins, 0)?;
        let x = rows(xt, "X")?;
        let mut out = Vec::with_capacity(x.n * x.c);
        for i in 0..x.n {
            let r = x.row(i);
            let z = match a.norm {
                Norm::Max => r.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)),
                Norm::L1 => r.iter().map(|v| v.abs()).sum(),
                Norm::L2 => r.iter().map(|v| v * v).sum::<f64>().sqrt(),
            };
            let z = if z == 0.0 || r.is_empty() { 1.0 } else { z };
            out.extend(r.iter().map(|&v| (v / z) as f32));
        }
        Ok(vec![Value::Tensor(Tensor::from_vec(xt.shape(), out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{run, string};

    #[test]
    fn max_l1_l2_and_zero_rows() {
        let x = Tensor::from_vec(&[2, 2], vec![3i32, -4, 0, 0]).unwrap();
        let get = |n: &str| run("Normalizer", vec![string("norm", n)], vec![x.clone()]).unwrap();
        assert_eq!(
            get("MAX")[0],
            Tensor::from_vec(&[2, 2], vec![1.0f32, -4.0 / 3.0, 0.0, 0.0]).unwrap()
        );
        assert_eq!(
            get("L1")[0],
            Tensor::from_vec(&[2, 2], vec![3.0f32 / 7.0, -4.0 / 7.0, 0.0, 0.0]).unwrap()
        );
        assert_eq!(
            get("L2")[0],
            Tensor::from_vec(&[2, 2], vec![0.6f32, -0.8, 0.0, 0.0]).unwrap()
        );
        let err = run("Normalizer", vec![string("norm", "L3")], vec![x]).unwrap_err();
        assert!(err.contains("norm"), "{err}");
    }
}
