//! QuantizeLinear: `saturate(round(x / scale) + zero_point)` into an
//! integer, float8 or float4 type, per tensor, per axis or blocked.

use super::cast_values::dtype_of_code;
use super::cast_values::{cast_tensor, encode_minifloat, mini_spec, small, CastOpts};
use super::quantization::{dtype_attr, int_range, param_index, round_to, zero_point_values};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::array;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

/// QuantizeLinear: x's shape; the type of `output_dtype`, else of the zero
/// point, else uint8.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.attrs.int("output_dtype") {
        Some(c) if c != 0 => dtype_of_code(c, "output_dtype")?,
        _ => {
            if cx.has_input(2) {
                cx.elem_req(2)?
            } else {
                DataType::Uint8
            }
        }
    };
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 1);
    let block = info.attrs.int_or("block_size", 0);
    let saturate = info.attrs.int_or("saturate", 1) != 0;
    let out_attr = dtype_attr(info, "output_dtype")?;
    let precision = dtype_attr(info, "precision")?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let scale = tensor_in(ins, 1)?;
        let zp = opt_tensor_in(ins, 2)?;
        let out_t = match (out_attr, zp) {
            (Some(o), Some(z)) if o != z.dtype() => {
                bail!(
                    "QuantizeLinear: output_dtype {o} differs from the zero point's type {}",
                    z.dtype()
                )
            }
            (Some(o), _) => o,
            (None, Some(z)) => z.dtype(),
            (None, None) => DataType::Uint8,
        };
        if !(x.dtype().is_float() || x.dtype() == DataType::Int32) {
            bail!(
                "QuantizeLinear: x must be float or int32, got {}",
                x.dtype()
            );
        }
        let xs = x.to_f64_vec().unwrap_or_default();
        let ss = match scale.to_f64_vec() {
            Some(v) if scale.dtype().is_float() || scale.dtype() == DataType::Int32 => v,
            _ => bail!(
                "QuantizeLinear: scale must be numeric, got {}",
                scale.dtype()
            ),
        };
        let zs = zero_point_values("QuantizeLinear", zp, scale)?;
        let idx = param_index(x.shape(), scale.shape(), axis, block)?;
        let prec = precision.unwrap_or(scale.dtype());
        let shape = x.shape();
        let q = |i: usize| -> f64 { round_to(prec, xs[i] / ss[idx[i]]) };
        let out = if let Some((lo, hi)) = int_range(out_t) {
            let v: Vec<f64> = (0..xs.len())
                .map(|i| {
                    let r = q(i).round_ties_even() + zs[idx[i]];
                    if r.is_nan() {
                        0.0
                    } else {
                        r.clamp(lo, hi)
                    }
                })
                .collect();
            let as_int = Tensor::F64(array(shape, v)?);
            cast_tensor(
                &as_int,
                out_t,
                &CastOpts {
                    saturate: true,
                    round_mode: "up".into(),
                },
            )?
        } else if mini_spec(out_t).is_some() {
            let codes: Vec<u8> = (0..xs.len())
                .map(|i| encode_minifloat(out_t, q(i) + zs[idx[i]], saturate).unwrap_or(0))
                .collect();
            small(out_t, shape, codes)?
        } else {
            bail!("QuantizeLinear: output type {out_t} is not supported");
        };
        Ok(vec![Value::Tensor(out)])
    }))
}
