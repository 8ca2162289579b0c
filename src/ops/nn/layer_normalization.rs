//! LayerNormalization: standardised over the axes from `axis` on, scaled
//! and shifted (float32 rows in float32 where contiguous).

use super::channel_stats::standardize;
use super::float_input::float_in;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{broadcast_to, from_f64s, to_f64s};
use crate::ops::kernels::norm_axis;
use crate::ops::shape_rules::same_as_input;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;
use ndarray::{ArrayD, IxDyn};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    let elem = match cx.attrs.int_or("stash_type", 1) {
        1 => DataType::Float,
        11 => DataType::Double,
        10 => DataType::Float16,
        16 => DataType::Bfloat16,
        _ => cx.elem_req(0)?,
    };
    let stat = match cx.shape(0) {
        Some(s) => {
            let a = norm_axis(cx.attrs.int_or("axis", -1), s.len())?;
            let mut v: Vec<Dim> = s[..a].to_vec();
            v.resize(s.len(), Some(Expr::int(1)));
            Some(v)
        }
        None => None,
    };
    for o in 1..cx.num_outputs().min(3) {
        cx.set_tensor(o, elem, stat.clone());
    }
    Ok(())
}

/// LayerNormalization on the f32 fast path when it applies: a contiguous
/// float32 input, and a float32 Scale (and B) holding exactly one value per
/// element of the normalised block. `None` sends the caller to the f64 path.
type LayerNormRows = (Vec<f32>, Vec<f64>, Vec<f64>);

fn layer_norm_f32(
    x: &Tensor,
    ins: &[Option<&Value>],
    axis: usize,
    eps: f64,
) -> Result<Option<LayerNormRows>, KernelError> {
    let Tensor::F32(a) = x else { return Ok(None) };
    let Some(src) = a.as_slice() else {
        return Ok(None);
    };
    let block: usize = a.shape()[axis..].iter().product();
    // Scale and B must have the block's own shape (leading 1s aside): the
    // f64 path broadcasts anything else, or refuses it
    let trim = |d: &[usize]| {
        d.iter()
            .skip_while(|&&n| n == 1)
            .copied()
            .collect::<Vec<_>>()
    };
    let block_dims = trim(&a.shape()[axis..]);
    let per_block = |t: &Tensor| match t {
        Tensor::F32(s) if trim(s.shape()) == block_dims => s.as_slice().map(|v| v.to_vec()),
        _ => None,
    };
    let Some(scale) = per_block(tensor_in(ins, 1)?) else {
        return Ok(None);
    };
    let bias = match opt_tensor_in(ins, 2)? {
        Some(b) => match per_block(b) {
            Some(v) => Some(v),
            None => return Ok(None),
        },
        None => None,
    };
    if block == 0 {
        return Ok(None);
    }
    Ok(Some(crate::ops::kernels::rows_f32::layer_norm_rows(
        src,
        block,
        eps,
        &scale,
        bias.as_deref(),
    )))
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eps = info.attrs.float_or("epsilon", 1e-5) as f64;
    let axis = info.attrs.int_or("axis", -1);
    let stash = info.attrs.int_or("stash_type", 1);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "LayerNormalization")?;
        let sh = x.shape().to_vec();
        let a = norm_axis(axis, sh.len())?;
        let block: usize = sh[a..].iter().product();
        let mut stat_shape = sh[..a].to_vec();
        stat_shape.resize(sh.len(), 1);
        let st = match stash {
            1 => DataType::Float,
            11 => DataType::Double,
            10 => DataType::Float16,
            16 => DataType::Bfloat16,
            _ => x.dtype(),
        };
        if let Some((y, means, invs)) = layer_norm_f32(x, ins, a, eps)? {
            return Ok(vec![
                Tensor::F32(ArrayD::from_shape_vec(IxDyn(&sh), y)?).into(),
                from_f64s(st, &stat_shape, means)?.into(),
                from_f64s(st, &stat_shape, invs)?.into(),
            ]);
        }
        let mut v = to_f64s(x, "X")?;
        let (means, invs) = standardize(&mut v, block, eps);
        let scale = broadcast_to(tensor_in(ins, 1)?, &sh, "Scale")?;
        let bias = match opt_tensor_in(ins, 2)? {
            Some(b) => Some(broadcast_to(b, &sh, "B")?),
            None => None,
        };
        for (i, y) in v.iter_mut().enumerate() {
            *y = *y * scale[i] + bias.as_ref().map_or(0.0, |b| b[i]);
        }
        Ok(vec![
            from_f64s(x.dtype(), &sh, v)?.into(),
            from_f64s(st, &stat_shape, means)?.into(),
            from_f64s(st, &stat_shape, invs)?.into(),
        ])
    }))
}
