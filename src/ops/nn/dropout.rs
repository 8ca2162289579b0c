//! Dropout: the identity with an all-true mask in inference; in training
//! mode, a seeded Bernoulli mask and the kept values scaled by 1/(1 - ratio).

use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use ndarray::{ArrayD, IxDyn};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    if cx.num_outputs() > 1 {
        let elem = if cx.opset >= 10 {
            DataType::Bool
        } else {
            cx.elem_req(0)?
        };
        let shape = cx.shape(0).map(|s| s.to_vec());
        cx.set_tensor(1, elem, shape);
    }
    Ok(())
}

/// A small deterministic generator (SplitMix64) for Dropout's mask.
struct SplitMix(u64);

impl SplitMix {
    /// A uniform value in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let nout = info.node.output.len();
    let opset = info.opset;
    let attr_ratio = info.attrs.float_or("ratio", 0.5) as f64;
    let seed = info.attrs.int("seed");
    let calls = std::sync::atomic::AtomicU64::new(0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let training = if opset >= 12 {
            match opt_tensor_in(ins, 2)? {
                Some(t) => {
                    t.to_f64_vec()
                        .and_then(|v| v.first().copied())
                        .unwrap_or(0.0)
                        != 0.0
                }
                None => false,
            }
        } else {
            false
        };
        let ratio = if opset >= 12 {
            match opt_tensor_in(ins, 1)? {
                Some(t) => t
                    .to_f64_vec()
                    .and_then(|v| v.first().copied())
                    .unwrap_or(0.5),
                None => 0.5,
            }
        } else {
            attr_ratio
        };
        if training && ratio != 0.0 {
            if !(0.0..1.0).contains(&ratio) {
                bail!("Dropout ratio must be in [0, 1), got {ratio}");
            }
            if !x.dtype().is_standard_float() {
                bail!(
                    "Dropout in training mode needs a float input, got {}",
                    x.dtype()
                );
            }
            let call = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let base = match seed {
                Some(s) => s as u64,
                None => std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0),
            };
            let mut rng = SplitMix(base ^ call.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let keep: Vec<bool> = (0..x.len()).map(|_| rng.unit() >= ratio).collect();
            let scale = 1.0 / (1.0 - ratio);
            let y: Vec<f64> = to_f64s(x, "data")?
                .iter()
                .zip(&keep)
                .map(|(&v, &k)| if k { v * scale } else { 0.0 })
                .collect();
            let mut outs: Vec<Value> = vec![from_f64s(x.dtype(), x.shape(), y)?.into()];
            if nout > 1 {
                outs.push(Tensor::Bool(ArrayD::from_shape_vec(IxDyn(x.shape()), keep)?).into());
            }
            return Ok(outs);
        }
        let mut outs: Vec<Value> = vec![x.clone().into()];
        if nout > 1 {
            let mask = if opset >= 10 {
                Tensor::Bool(ArrayD::from_elem(IxDyn(x.shape()), true))
            } else {
                from_f64s(x.dtype(), x.shape(), vec![1.0; x.len()])?
            };
            outs.push(mask.into());
        }
        Ok(outs)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::run;

    #[test]
    fn dropout_inference_is_identity_with_true_mask() {
        let x = Tensor::from_vec(&[3], vec![1.0f32, -2.0, 3.0]).unwrap();
        let out = run(kernel, 23, vec![], vec![Some(x)], 2).unwrap();
        assert_eq!(out[0].to_f64_vec().unwrap(), vec![1.0, -2.0, 3.0]);
        assert_eq!(out[1].to_f64_vec().unwrap(), vec![1.0, 1.0, 1.0]);
        assert_eq!(out[1].dtype(), DataType::Bool);
    }

    #[test]
    fn splitmix_is_uniform_enough() {
        let mut r = SplitMix(7);
        let v: Vec<f64> = (0..10000).map(|_| r.unit()).collect();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
        let below = v.iter().filter(|&&x| x < 0.25).count();
        assert!((2200..2800).contains(&below), "{below}");
    }
}
