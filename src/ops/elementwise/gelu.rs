//! Gelu: `x * Phi(x)` exactly (`approximate = "none"`, float32 through
//! `exp_f32`, float64 with the double-accuracy `erf`) or with the tanh
//! approximation.

use super::float_map::{f32_slice_map, float_kernel, map_f32_chunks, map_float};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::exp_f32;
use crate::ops::kernels::scalar_math::{erf, erf_single};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

pub use super::value_rules::same_as_input as shape;

f32_slice_map!(fn gelu_f32 = exp_f32::gelu);

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let approx = info.attrs.string_or("approximate", "none");
    match approx.as_str() {
        "none" => Ok(Box::new(|_, ins| {
            let x = tensor_in(ins, 0)?;
            if let Tensor::F32(a) = x {
                if let Some(src) = a.as_slice() {
                    let out = map_f32_chunks(src, &gelu_f32);
                    let y = ArrayD::from_shape_vec(a.raw_dim(), out)?;
                    return Ok(vec![Value::Tensor(Tensor::F32(y))]);
                }
            }
            let y = if matches!(x, Tensor::F64(_)) {
                map_float("Gelu", x, |v| {
                    0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))
                })?
            } else {
                // float32 and narrower: float32 accuracy is all the output keeps
                map_float("Gelu", x, |v| {
                    0.5 * v * (1.0 + erf_single(v / std::f64::consts::SQRT_2))
                })?
            };
            Ok(vec![Value::Tensor(y)])
        })),
        "tanh" => Ok(float_kernel("Gelu", |v| {
            let k = (2.0 / std::f64::consts::PI).sqrt();
            0.5 * v * (1.0 + (k * (v + 0.044715 * v * v * v)).tanh())
        })),
        other => bail!("Gelu: unknown approximate '{other}' (none or tanh)"),
    }
}
