//! Tensor manipulation kernels: Reshape, Transpose, Concat.

use super::norm_axis;
use crate::bail;
use crate::map_array;
use crate::runtime::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Tensor, Value};
use ndarray::{Axis, IxDyn};

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
        if known == 0 || total % known != 0 {
            bail!("cannot reshape {input:?} ({total} elements) to {target:?}");
        }
        out[i] = total / known;
    } else if known != total {
        bail!("cannot reshape {input:?} ({total} elements) to {target:?}");
    }
    Ok(out)
}

pub fn reshape(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let allowzero = info.attrs.int_or("allowzero", 0) != 0;
    let attr_shape = if info.opset < 5 {
        info.attrs.ints("shape")
    } else {
        None
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let target = match &attr_shape {
            Some(s) => s.clone(),
            None => tensor_in(ins, 1)?.to_i64_vec()?,
        };
        let shape = reshape_target(x.shape(), &target, allowzero)?;
        Ok(vec![Value::Tensor(x.reshape(&shape)?)])
    }))
}

pub fn transpose(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let perm = info.attrs.ints("perm");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let r = x.rank();
        let perm: Vec<usize> = match &perm {
            Some(p) => {
                if p.len() != r {
                    bail!("perm {p:?} does not match rank {r}");
                }
                let mut seen = vec![false; r];
                let mut out = Vec::with_capacity(r);
                for &a in p {
                    let a = norm_axis(a, r)?;
                    if seen[a] {
                        bail!("perm {p:?} repeats axis {a}");
                    }
                    seen[a] = true;
                    out.push(a);
                }
                out
            }
            None => (0..r).rev().collect(),
        };
        Ok(vec![Value::Tensor(map_array!(x, a => a
            .view()
            .permuted_axes(IxDyn(&perm))
            .as_standard_layout()
            .into_owned()))])
    }))
}

pub fn concat(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info
        .attrs
        .int("axis")
        .ok_or_else(|| KernelError::new("Concat needs the 'axis' attribute"))?;
    Ok(Box::new(move |_, ins| {
        let ts: Vec<&Tensor> = (0..ins.len())
            .map(|i| tensor_in(ins, i))
            .collect::<Result<_, _>>()?;
        let Some(first) = ts.first() else {
            bail!("Concat needs at least one input");
        };
        Ok(vec![Value::Tensor(concat_tensors(&ts, axis, first)?)])
    }))
}

/// Concatenates tensors of one type along an axis.
pub fn concat_tensors(ts: &[&Tensor], axis: i64, first: &Tensor) -> Result<Tensor, KernelError> {
    let r = first.rank();
    let ax = norm_axis(axis, r)?;
    for (i, t) in ts.iter().enumerate() {
        if t.dtype() != first.dtype() {
            bail!("input {i} is {}, input 0 is {}", t.dtype(), first.dtype());
        }
        if t.rank() != r
            || t.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .any(|(k, (a, b))| k != ax && a != b)
        {
            bail!(
                "input {i} of shape {:?} does not match input 0 of shape {:?} outside axis {ax}",
                t.shape(),
                first.shape()
            );
        }
    }
    macro_rules! cat {
        ($a:ident, $variant:ident) => {{
            let views: Vec<_> = ts
                .iter()
                .map(|t| match t {
                    Tensor::$variant(x) => x.view(),
                    _ => unreachable!("types checked above"),
                })
                .collect();
            Tensor::$variant(ndarray::concatenate(Axis(ax), &views)?)
        }};
    }
    Ok(match first {
        Tensor::F32(_) => cat!(a, F32),
        Tensor::F64(_) => cat!(a, F64),
        Tensor::F16(_) => cat!(a, F16),
        Tensor::BF16(_) => cat!(a, BF16),
        Tensor::I8(_) => cat!(a, I8),
        Tensor::I16(_) => cat!(a, I16),
        Tensor::I32(_) => cat!(a, I32),
        Tensor::I64(_) => cat!(a, I64),
        Tensor::U8(_) => cat!(a, U8),
        Tensor::U16(_) => cat!(a, U16),
        Tensor::U32(_) => cat!(a, U32),
        Tensor::U64(_) => cat!(a, U64),
        Tensor::Bool(_) => cat!(a, Bool),
        Tensor::Str(_) => cat!(a, Str),
        Tensor::Small { dtype, .. } => {
            let views: Vec<_> = ts
                .iter()
                .map(|t| match t {
                    Tensor::Small { data, .. } => data.view(),
                    _ => unreachable!("types checked above"),
                })
                .collect();
            Tensor::Small {
                dtype: *dtype,
                data: ndarray::concatenate(Axis(ax), &views)?,
            }
        }
    })
}
