//! DynamicQuantizeLinear.

use super::f64_values::{f64_of, require_float};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Tensor, Value};

fn round_half_even(v: f64) -> f64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 {
        2.0 * (v / 2.0).round()
    } else {
        r
    }
}

pub fn dynamic_quantize_linear(_: &NodeInfo) -> Result<Kernel, KernelError> {
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
