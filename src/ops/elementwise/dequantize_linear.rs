//! DequantizeLinear: `(x - zero_point) * scale`, per tensor, per axis or
//! blocked.

use super::cast_values::{cast_tensor, dtype_of_code, CastOpts};
use super::quantization::{dtype_attr, param_index, zero_point_values};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::array;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

/// DequantizeLinear: x's shape; the type of `output_dtype`, else of the scale.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.attrs.int("output_dtype") {
        Some(c) if c != 0 => dtype_of_code(c, "output_dtype")?,
        _ => cx.elem_req(1)?,
    };
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 1);
    let block = info.attrs.int_or("block_size", 0);
    let out_attr = dtype_attr(info, "output_dtype")?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let scale = tensor_in(ins, 1)?;
        let zp = opt_tensor_in(ins, 2)?;
        if !(x.dtype().is_int() || x.dtype().is_float8() || x.dtype() == DataType::Float4E2M1) {
            bail!(
                "DequantizeLinear: x must be a quantized type, got {}",
                x.dtype()
            );
        }
        if !scale.dtype().is_float() {
            bail!(
                "DequantizeLinear: scale must be a float type, got {}",
                scale.dtype()
            );
        }
        let out_t = out_attr.unwrap_or(scale.dtype());
        if !matches!(
            out_t,
            DataType::Float | DataType::Float16 | DataType::Bfloat16 | DataType::Double
        ) {
            bail!("DequantizeLinear: output type {out_t} is not supported");
        }
        let xs = x.to_f64_vec().unwrap_or_default();
        let ss = scale.to_f64_vec().unwrap_or_default();
        if let Some(z) = zp.filter(|z| z.dtype() != x.dtype()) {
            bail!(
                "DequantizeLinear: zero point type {} differs from x type {}",
                z.dtype(),
                x.dtype()
            );
        }
        let zs = zero_point_values("DequantizeLinear", zp, scale)?;
        let idx = param_index(x.shape(), scale.shape(), axis, block)?;
        let v: Vec<f64> = (0..xs.len())
            .map(|i| (xs[i] - zs[idx[i]]) * ss[idx[i]])
            .collect();
        let y = cast_tensor(
            &Tensor::F64(array(x.shape(), v)?),
            out_t,
            &CastOpts {
                saturate: true,
                round_mode: "up".into(),
            },
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}
