//! `Reshape`: the input's data with a new shape (`0` copies a dimension
//! unless `allowzero`, `-1` is inferred).

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::product;
use crate::ops::{InferCtx, ShapeError, SymValue};
use crate::tensor::Value;
use crate::value_type::Dim;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let allowzero = cx.attrs.int_or("allowzero", 0) != 0;
    // Reshape-1's shape attribute is upgraded by `graph::upgrade` to input 1
    let target: Option<Vec<Expr>> = cx.value(1).map(|v| v.values.clone());
    let Some(target) = target else {
        // rank known from the shape input's length
        // rank known from the shape input's length; the sizes depend on data
        let rank = cx
            .shape(1)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int())
            .filter(|r| (0..=64).contains(r));
        let dims = rank.map(|r| (0..r).map(|_| Some(cx.fresh())).collect());
        cx.set_tensor(0, elem, dims);
        return Ok(());
    };
    let input = cx.shape(0).map(|s| s.to_vec());
    let mut out: Vec<Dim> = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, t) in target.iter().enumerate() {
        match t.as_int() {
            Some(-1) => {
                if infer_at.replace(i).is_some() {
                    return Err(ShapeError::new(format!(
                        "shape has more than one -1: {target:?}"
                    )));
                }
                out.push(None);
            }
            Some(0) if !allowzero => {
                out.push(input.as_ref().and_then(|s| s.get(i).cloned().flatten()))
            }
            Some(v) if v < -1 => {
                return Err(ShapeError::new(format!(
                    "shape has a negative dimension {v}"
                )))
            }
            _ => out.push(Some(t.clone())),
        }
    }
    if let Some(i) = infer_at {
        let total = input.as_deref().and_then(product);
        let known = out
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .try_fold(Expr::int(1), |acc, (_, d)| d.as_ref().map(|e| acc.mul(e)));
        if let (Some(total), Some(known)) = (total, known) {
            if known.as_int() == Some(0) {
                return Err(ShapeError::new("shape with -1 has a zero dimension"));
            }
            if let (Some(t), Some(k)) = (total.as_int(), known.as_int()) {
                if t % k != 0 {
                    return Err(ShapeError::new(format!(
                        "cannot reshape {t} elements into a shape with known product {k}"
                    )));
                }
            }
            out[i] = Some(total.floor_div(&known));
        }
    } else if let (Some(total), Some(want)) = (input.as_deref().and_then(product), product(&out)) {
        if let (Some(t), Some(w)) = (total.as_int(), want.as_int()) {
            if t != w {
                return Err(ShapeError::new(format!(
                    "cannot reshape {t} elements into {w}"
                )));
            }
        }
    }
    cx.set_tensor(0, elem, Some(out));
    if let Some(v) = cx.value(0).cloned() {
        let n = v.values.len();
        if let Some(Some(dims)) = cx
            .outputs
            .first()
            .and_then(|o| o.as_ref().map(|t| t.shape().map(|s| s.to_vec())))
        {
            let ints: Option<Vec<usize>> = dims
                .iter()
                .map(|d| d.as_ref().and_then(|e| e.as_int()).map(|x| x as usize))
                .collect();
            if let Some(sh) = ints {
                if sh.iter().product::<usize>() == n {
                    cx.set_value(
                        0,
                        SymValue {
                            shape: sh,
                            values: v.values,
                        },
                    );
                }
            }
        }
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let allowzero = info.attrs.int_or("allowzero", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let target = tensor_in(ins, 1)?.to_i64_vec()?;
        let shape = reshape_target(x.shape(), &target, allowzero)?;
        Ok(vec![Value::Tensor(x.reshape(&shape)?)])
    }))
}

/// The output shape of Reshape: `0` copies the input dimension (unless
/// `allowzero`), one `-1` takes what is left.
pub fn reshape_target(
    input: &[usize],
    target: &[i64],
    allowzero: bool,
) -> Result<Vec<usize>, KernelError> {
    let total: usize = input.iter().product();
    let mut out = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, &d) in target.iter().enumerate() {
        match d {
            -1 => {
                if infer_at.is_some() {
                    bail!("shape {target:?} has more than one -1");
                }
                infer_at = Some(i);
                out.push(1);
            }
            0 if !allowzero => match input.get(i) {
                Some(&v) => out.push(v),
                None => bail!("shape {target:?}: 0 at axis {i} copies no input dimension"),
            },
            d if d < 0 => bail!("shape {target:?} has a negative dimension {d}"),
            d => out.push(d as usize),
        }
    }
    let known = out
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != infer_at)
        .try_fold(1usize, |acc, (_, &d)| acc.checked_mul(d))
        .ok_or_else(|| KernelError::new(format!("shape {target:?} is too large")))?;
    if let Some(i) = infer_at {
        if known == 0 || !total.is_multiple_of(known) {
            bail!("cannot reshape {input:?} ({total} elements) to {target:?}");
        }
        out[i] = total / known;
    } else if known != total {
        bail!("cannot reshape {input:?} ({total} elements) to {target:?}");
    }
    Ok(out)
}
