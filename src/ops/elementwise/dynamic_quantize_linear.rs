//! DynamicQuantizeLinear: x quantized to uint8 with the scale and zero
//! point that map its range (widened to include 0) onto 0..=255.

use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, require_float};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

fn round_half_even(v: f64) -> f64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 {
        2.0 * (v / 2.0).round()
    } else {
        r
    }
}

/// y: uint8 of x's shape; the scale (float) and zero point (uint8) scalars.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    cx.set_tensor(0, DataType::Uint8, s);
    cx.set_tensor(1, DataType::Float, Some(vec![]));
    cx.set_tensor(2, DataType::Uint8, Some(vec![]));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        require_float(x, "x")?;
        let v = f64_of(x, "x")?;
        let mn = v.iter().copied().fold(0.0f64, f64::min);
        let mx = v.iter().copied().fold(0.0f64, f64::max);
        let scale = ((mx - mn) / 255.0) as f32 as f64;
        let zp = if scale == 0.0 {
            0.0
        } else {
            round_half_even((0.0 - mn) / scale).clamp(0.0, 255.0)
        };
        let y: Vec<u8> = v
            .iter()
            .map(|&e| {
                if scale == 0.0 {
                    zp as u8
                } else {
                    (round_half_even(((e as f32) / (scale as f32)) as f64) + zp).clamp(0.0, 255.0)
                        as u8
                }
            })
            .collect();
        Ok(vec![
            Value::Tensor(Tensor::from_vec(x.shape(), y)?),
            Value::Tensor(Tensor::scalar(scale as f32)),
            Value::Tensor(Tensor::scalar(zp as u8)),
        ])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_even() {
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(3.5), 4.0);
        assert_eq!(round_half_even(-2.5), -2.0);
        assert_eq!(round_half_even(2.4), 2.0);
    }
}
