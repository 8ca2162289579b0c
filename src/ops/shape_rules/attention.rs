//! Rules for the transformer operators: Attention, FlexAttention,
//! RotaryEmbedding, RMSNormalization, SwiGLU, LinearAttention,
//! CausalConvWithState, TensorScatter.

use super::norm_axis;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::DataType;
use crate::value_type::Dim;

fn dim(cx: &InferCtx, i: usize, d: usize) -> Dim {
    cx.shape(i).and_then(|s| s.get(d).cloned()).flatten()
}

fn mul(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.mul(b.as_ref()?))
}

fn div(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.floor_div(b.as_ref()?))
}

fn add(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.add(b.as_ref()?))
}

fn attr_dim(cx: &InferCtx, name: &str) -> Dim {
    cx.attrs.int(name).map(Expr::int)
}

fn check_float(cx: &InferCtx, i: usize, op: &str) -> Result<DataType, ShapeError> {
    let e = cx.elem_req(i)?;
    if !matches!(
        e,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    ) {
        shape_bail!("{op}: input {i} must be a float tensor, got {e}");
    }
    Ok(e)
}

/// Attention: Y, present_key, present_value, qk_matmul_output.
pub fn attention(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let qe = check_float(cx, 0, "Attention")?;
    let ke = check_float(cx, 1, "Attention")?;
    let ve = check_float(cx, 2, "Attention")?;
    let rank = match cx.rank(0) {
        Some(r) => r,
        None => {
            cx.set_tensor(0, qe, None);
            return Ok(());
        }
    };
    if rank != 3 && rank != 4 {
        shape_bail!("Attention: Q must be 3-D or 4-D, got rank {rank}");
    }
    for i in 1..3 {
        if let Some(r) = cx.rank(i) {
            if r != rank {
                shape_bail!("Attention: Q, K and V must have the same rank");
            }
        }
    }
    let b = dim(cx, 0, 0);
    // (heads, seq, head size) of Q, K, V.
    let (hq, sq, hkv, skv, dk, dv) = if rank == 4 {
        (
            dim(cx, 0, 1),
            dim(cx, 0, 2),
            dim(cx, 1, 1),
            dim(cx, 1, 2),
            dim(cx, 1, 3),
            dim(cx, 2, 3),
        )
    } else {
        let hq = attr_dim(cx, "q_num_heads");
        let hkv = attr_dim(cx, "kv_num_heads");
        (
            hq,
            dim(cx, 0, 1),
            hkv.clone(),
            dim(cx, 1, 1),
            div(&dim(cx, 1, 2), &hkv),
            div(&dim(cx, 2, 2), &hkv),
        )
    };
    let y = if rank == 4 {
        vec![b.clone(), hq.clone(), sq.clone(), dv.clone()]
    } else {
        vec![b.clone(), sq.clone(), mul(&hq, &dv)]
    };
    cx.set_tensor(0, qe, Some(y));
    let past = if cx.has_input(4) {
        dim(cx, 4, 2)
    } else {
        Some(Expr::int(0))
    };
    let total = add(&past, &skv);
    if cx.num_outputs() > 1 {
        let pk = vec![b.clone(), hkv.clone(), total.clone(), dk];
        cx.set_tensor(1, ke, Some(pk));
    }
    if cx.num_outputs() > 2 {
        let pv = vec![b.clone(), hkv, total.clone(), dv];
        cx.set_tensor(2, ve, Some(pv));
    }
    if cx.num_outputs() > 3 {
        cx.set_tensor(3, qe, Some(vec![b, hq, sq, total]));
    }
    Ok(())
}

/// FlexAttention: (B, Hq, Sq, Dv).
pub fn flex_attention(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let qe = check_float(cx, 0, "FlexAttention")?;
    for i in 0..3 {
        if let Some(r) = cx.rank(i) {
            if r != 4 {
                shape_bail!("FlexAttention: input {i} must be 4-D, got rank {r}");
            }
        }
    }
    let y = vec![dim(cx, 0, 0), dim(cx, 0, 1), dim(cx, 0, 2), dim(cx, 2, 3)];
    cx.set_tensor(0, qe, Some(y));
    Ok(())
}

/// Output 0 has input 0's float type and shape.
fn same_float(cx: &mut InferCtx, op: &str) -> Result<(), ShapeError> {
    let e = check_float(cx, 0, op)?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, shape);
    Ok(())
}

pub fn rotary_embedding(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(r) = cx.rank(0) {
        if r != 3 && r != 4 {
            shape_bail!("RotaryEmbedding: X must be 3-D or 4-D, got rank {r}");
        }
    }
    same_float(cx, "RotaryEmbedding")
}

/// RMSNormalization: X's shape, scale's type.
pub fn rms_normalization(cx: &mut InferCtx) -> Result<(), ShapeError> {
    check_float(cx, 0, "RMSNormalization")?;
    let e = check_float(cx, 1, "RMSNormalization")?;
    if let Some(r) = cx.rank(0) {
        norm_axis(cx.attrs.int_or("axis", -1), r)?;
    }
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, shape);
    Ok(())
}

pub fn swiglu(cx: &mut InferCtx) -> Result<(), ShapeError> {
    check_float(cx, 1, "SwiGLU")?;
    if let (Some(a), Some(b)) = (cx.rank(0), cx.rank(1)) {
        if a != b {
            shape_bail!("SwiGLU: A and B must have the same shape");
        }
    }
    same_float(cx, "SwiGLU")
}

/// LinearAttention: output (B, T, Hq*Dv), present_state (B, Hkv, Dk, Dv).
pub fn linear_attention(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let qe = check_float(cx, 0, "LinearAttention")?;
    let hq = attr_dim(cx, "q_num_heads");
    let hkv = attr_dim(cx, "kv_num_heads");
    let dk = div(&dim(cx, 0, 2), &hq);
    let dv = div(&dim(cx, 2, 2), &hkv);
    let y = vec![dim(cx, 0, 0), dim(cx, 0, 1), mul(&hq, &dv)];
    cx.set_tensor(0, qe, Some(y));
    if cx.num_outputs() > 1 {
        let se = if cx.has_input(3) { cx.elem_req(3)? } else { qe };
        cx.set_tensor(1, se, Some(vec![dim(cx, 0, 0), hkv, dk, dv]));
    }
    Ok(())
}

/// CausalConvWithState: output like input, present_state (B, C, k-1).
pub fn causal_conv_with_state(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(r) = cx.rank(0) {
        if r != 3 {
            shape_bail!("CausalConvWithState: input must be 3-D, got rank {r}");
        }
    }
    same_float(cx, "CausalConvWithState")?;
    if cx.num_outputs() > 1 {
        let e = cx.elem_req(0)?;
        let k1 = dim(cx, 1, 2).map(|k| k.sub(&Expr::int(1)));
        cx.set_tensor(1, e, Some(vec![dim(cx, 0, 0), dim(cx, 0, 1), k1]));
    }
    Ok(())
}

/// TensorScatter: same type and shape as past_cache.
pub fn tensor_scatter(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    if let Some(r) = cx.rank(0) {
        let a = norm_axis(cx.attrs.int_or("axis", -2), r)?;
        if a == 0 {
            shape_bail!("TensorScatter: axis cannot be the batch axis");
        }
    }
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, shape);
    Ok(())
}
