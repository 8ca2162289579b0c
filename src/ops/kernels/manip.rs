//! Tensor manipulation kernels: Reshape, Transpose, Concat, Flatten,
//! Squeeze, Unsqueeze, Split, Slice, Expand, Tile, Pad, Shape, Size,
//! ConstantOfShape, Constant, Range, Trilu, EyeLike, CumSum,
//! ReverseSequence, DepthToSpace, SpaceToDepth; and index helpers shared
//! with the gather/scatter family.

use super::elementwise::Num;
use super::norm_axis;
use crate::ops::constant_value::constant_value;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::slice_indices::slice_indices;
use crate::tensor::{DataType, Tensor, Value};
use crate::{bail, dispatch_num, map_array};
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
        if known == 0 || !total.is_multiple_of(known) {
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
        let out_shape: Vec<usize> = perm.iter().map(|&a| x.shape()[a]).collect();
        let block = super::transpose_tiled::as_block_swap(x.shape(), &perm);
        Ok(vec![Value::Tensor(map_array!(x, a => {
            let tiled = block.zip(a.as_slice()).and_then(|(dims, s)| {
                super::transpose_tiled::transpose(s, dims, &out_shape)
            });
            match tiled {
                Some(t) => t,
                None => a
                    .view()
                    .permuted_axes(IxDyn(&perm))
                    .as_standard_layout()
                    .into_owned(),
            }
        }))])
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

// ---------------------------------------------------------------------------
// Shared helpers for index-based kernels (any element type).

/// Largest number of elements a manipulation kernel will produce.
pub const MAX_ELEMS: usize = 1 << 30;

/// Row-major strides of a shape.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1]);
    }
    s
}

/// The element count of a shape the kernel is about to allocate, checked
/// against the memory budget (8 bytes per element, the widest it holds).
pub fn checked_numel(shape: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(shape, 8)?)
}

/// Calls `f` with every multi-index of `shape` in row-major order.
pub fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        f(&idx);
        let mut k = shape.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Applies `$body` to two tensors of the same variant, rebuilding a tensor
/// of that variant; different types are an error.
#[macro_export]
macro_rules! map_pair {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr) => {{
        use $crate::tensor::Tensor as T_;
        match ($a, $b) {
            (T_::F32($x), T_::F32($y)) => T_::F32($body),
            (T_::F64($x), T_::F64($y)) => T_::F64($body),
            (T_::F16($x), T_::F16($y)) => T_::F16($body),
            (T_::BF16($x), T_::BF16($y)) => T_::BF16($body),
            (T_::I8($x), T_::I8($y)) => T_::I8($body),
            (T_::I16($x), T_::I16($y)) => T_::I16($body),
            (T_::I32($x), T_::I32($y)) => T_::I32($body),
            (T_::I64($x), T_::I64($y)) => T_::I64($body),
            (T_::U8($x), T_::U8($y)) => T_::U8($body),
            (T_::U16($x), T_::U16($y)) => T_::U16($body),
            (T_::U32($x), T_::U32($y)) => T_::U32($body),
            (T_::U64($x), T_::U64($y)) => T_::U64($body),
            (T_::Bool($x), T_::Bool($y)) => T_::Bool($body),
            (T_::Str($x), T_::Str($y)) => T_::Str($body),
            (
                T_::Small { dtype, data: $x },
                T_::Small {
                    dtype: d2,
                    data: $y,
                },
            ) if dtype == d2 => T_::Small {
                dtype: *dtype,
                data: $body,
            },
            (p, q) => $crate::bail!("element types differ: {} and {}", p.dtype(), q.dtype()),
        }
    }};
}

fn pick<T: Clone>(s: &[T], idx: &[usize], fill: Option<&T>) -> Result<Vec<T>, KernelError> {
    idx.iter()
        .map(|&i| match s.get(i) {
            Some(v) => Ok(v.clone()),
            None => match fill {
                Some(f) if i == usize::MAX => Ok(f.clone()),
                _ => Err(KernelError::new(format!("index {i} is out of range"))),
            },
        })
        .collect()
}

/// A tensor of shape `shape` whose elements are the input's elements at the
/// given row-major flat positions.
pub fn gather_flat(t: &Tensor, idx: &[usize], shape: &[usize]) -> Result<Tensor, KernelError> {
    if checked_numel(shape)? != idx.len() {
        bail!("{} positions do not fill shape {shape:?}", idx.len());
    }
    Ok(map_array!(t, a => {
        let st = a.as_standard_layout();
        let s = st.as_slice().ok_or_else(|| KernelError::new("non-contiguous array"))?;
        ndarray::ArrayD::from_shape_vec(IxDyn(shape), pick(s, idx, None)?)?
    }))
}

/// Like [`gather_flat`], but position `usize::MAX` takes the (scalar)
/// `fill` tensor's element, of the same type.
pub fn gather_flat_fill(
    t: &Tensor,
    idx: &[usize],
    shape: &[usize],
    fill: &Tensor,
) -> Result<Tensor, KernelError> {
    if checked_numel(shape)? != idx.len() {
        bail!("{} positions do not fill shape {shape:?}", idx.len());
    }
    Ok(map_pair!(t, fill, a, f => {
        let st = a.as_standard_layout();
        let s = st.as_slice().ok_or_else(|| KernelError::new("non-contiguous array"))?;
        let Some(fv) = f.iter().next() else { bail!("the fill value is empty") };
        ndarray::ArrayD::from_shape_vec(IxDyn(shape), pick(s, idx, Some(fv))?)?
    }))
}

/// Flat positions for an outer product of per-axis source indices
/// (`None` = fill, encoded as `usize::MAX`).
pub fn axes_positions(
    in_shape: &[usize],
    lists: &[Vec<Option<usize>>],
) -> Result<(Vec<usize>, Vec<usize>), KernelError> {
    let out_shape: Vec<usize> = lists.iter().map(|l| l.len()).collect();
    let n = checked_numel(&out_shape)?;
    let st = strides(in_shape);
    let mut pos = Vec::with_capacity(n);
    for_each_index(&out_shape, |ix| {
        let mut p = 0usize;
        for (k, &i) in ix.iter().enumerate() {
            match lists[k][i] {
                Some(s) => p += s * st[k],
                None => {
                    p = usize::MAX;
                    break;
                }
            }
        }
        pos.push(p);
    });
    Ok((pos, out_shape))
}

/// Gathers an outer product of per-axis indices (all present).
pub fn gather_axes(t: &Tensor, lists: &[Vec<usize>]) -> Result<Tensor, KernelError> {
    if lists.len() != t.rank()
        || lists
            .iter()
            .zip(t.shape())
            .any(|(l, &d)| l.iter().any(|&i| i >= d))
    {
        bail!(
            "internal: axis index lists do not match shape {:?}",
            t.shape()
        );
    }
    let opt: Vec<Vec<Option<usize>>> = lists
        .iter()
        .map(|l| l.iter().map(|&i| Some(i)).collect())
        .collect();
    let (pos, shape) = axes_positions(t.shape(), &opt)?;
    gather_flat(t, &pos, &shape)
}

/// Transposes a tensor by a permutation.
pub fn permute(t: &Tensor, perm: &[usize]) -> Tensor {
    map_array!(t, a => a
        .view()
        .permuted_axes(IxDyn(perm))
        .as_standard_layout()
        .into_owned())
}

/// The integer elements of input `i`.
pub fn ints_in(ins: &[Option<&Value>], i: usize) -> Result<Vec<i64>, KernelError> {
    Ok(tensor_in(ins, i)?.to_i64_vec()?)
}

/// The integer elements of input `i` when it is present.
pub fn opt_ints_in(ins: &[Option<&Value>], i: usize) -> Result<Option<Vec<i64>>, KernelError> {
    match crate::ops::kernel::opt_tensor_in(ins, i)? {
        Some(t) => Ok(Some(t.to_i64_vec()?)),
        None => Ok(None),
    }
}

/// A tensor of a numeric (or bool) type from f64 values.
pub fn tensor_from_f64(
    dtype: DataType,
    shape: &[usize],
    v: Vec<f64>,
) -> Result<Tensor, KernelError> {
    use half::{bf16, f16};
    let sh = IxDyn(shape);
    macro_rules! mk {
        ($var:ident, $e:expr) => {
            Tensor::$var(ndarray::ArrayD::from_shape_vec(
                sh,
                v.into_iter().map($e).collect(),
            )?)
        };
    }
    Ok(match dtype {
        DataType::Float => mk!(F32, |x| x as f32),
        DataType::Double => mk!(F64, |x| x),
        DataType::Float16 => mk!(F16, f16::from_f64),
        DataType::Bfloat16 => mk!(BF16, bf16::from_f64),
        DataType::Int8 => mk!(I8, |x| x as i8),
        DataType::Int16 => mk!(I16, |x| x as i16),
        DataType::Int32 => mk!(I32, |x| x as i32),
        DataType::Int64 => mk!(I64, |x| x as i64),
        DataType::Uint8 => mk!(U8, |x| x as u8),
        DataType::Uint16 => mk!(U16, |x| x as u16),
        DataType::Uint32 => mk!(U32, |x| x as u32),
        DataType::Uint64 => mk!(U64, |x| x as u64),
        DataType::Bool => mk!(Bool, |x| x != 0.0),
        other => bail!("element type {other} is not supported here"),
    })
}

/// Normalises a list of axes against a rank, rejecting repeats.
pub fn norm_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, KernelError> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = norm_axis(a, rank)?;
        if out.contains(&n) {
            bail!("axes {axes:?} repeat axis {n}");
        }
        out.push(n);
    }
    Ok(out)
}

fn out1(t: Tensor) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(t)])
}

// ---------------------------------------------------------------------------
// Flatten, Squeeze, Unsqueeze, Split, Slice, Expand, Tile, Pad.

pub fn flatten(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 1);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let r = x.rank() as i64;
        let a = if axis < 0 { axis + r } else { axis };
        if a < 0 || a > r {
            bail!("axis {axis} is out of range for rank {r}");
        }
        let (h, t) = x.shape().split_at(a as usize);
        let shape = [h.iter().product(), t.iter().product()];
        out1(x.reshape(&shape)?)
    }))
}

pub fn squeeze(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attr = if info.opset < 13 {
        info.attrs.ints("axes")
    } else {
        None
    };
    let from_input = info.opset >= 13;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axes = if from_input {
            opt_ints_in(ins, 1)?
        } else {
            attr.clone()
        };
        let r = x.rank();
        let shape: Vec<usize> = match axes {
            Some(ax) => {
                let ax = norm_axes(&ax, r)?;
                for &a in &ax {
                    if x.shape()[a] != 1 {
                        bail!("cannot squeeze axis {a} of size {}", x.shape()[a]);
                    }
                }
                x.shape()
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !ax.contains(i))
                    .map(|(_, &d)| d)
                    .collect()
            }
            None => x.shape().iter().copied().filter(|&d| d != 1).collect(),
        };
        out1(x.reshape(&shape)?)
    }))
}

pub fn unsqueeze(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attr = if info.opset < 13 {
        info.attrs.ints("axes")
    } else {
        None
    };
    let from_input = info.opset >= 13;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axes = if from_input {
            ints_in(ins, 1)?
        } else {
            attr.clone()
                .ok_or_else(|| KernelError::new("Unsqueeze needs 'axes'"))?
        };
        let r = x.rank() + axes.len();
        let ax = norm_axes(&axes, r)?;
        let mut it = x.shape().iter();
        let shape: Vec<usize> = (0..r)
            .map(|i| {
                if ax.contains(&i) {
                    1
                } else {
                    it.next().copied().unwrap_or(1)
                }
            })
            .collect();
        out1(x.reshape(&shape)?)
    }))
}

/// The sizes of Split's outputs.
pub fn split_sizes(
    dim: usize,
    split: Option<&[i64]>,
    n_out: usize,
    num_outputs: Option<i64>,
) -> Result<Vec<usize>, KernelError> {
    if let Some(s) = split {
        if s.iter().any(|&v| v < 0) {
            bail!("split {s:?} has a negative size");
        }
        let total: i64 = s.iter().fold(0i64, |a, &b| a.saturating_add(b));
        if total != dim as i64 {
            bail!("split {s:?} does not sum to the axis size {dim}");
        }
        return Ok(s.iter().map(|&v| v as usize).collect());
    }
    if let Some(n) = num_outputs {
        if n <= 0 {
            bail!("num_outputs must be positive, got {n}");
        }
        let n = n as usize;
        let chunk = dim.div_ceil(n);
        let mut out = Vec::with_capacity(n);
        let mut left = dim;
        for _ in 0..n {
            let c = chunk.min(left);
            out.push(c);
            left -= c;
        }
        return Ok(out);
    }
    if n_out == 0 || !dim.is_multiple_of(n_out) {
        bail!("axis size {dim} cannot be split evenly into {n_out} outputs");
    }
    Ok(vec![dim / n_out; n_out])
}

pub fn split(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let attr_split = if info.opset < 13 {
        info.attrs.ints("split")
    } else {
        None
    };
    // Split-1 also took the sizes as an optional second input
    let from_input = info.opset >= 13 || (info.opset < 2 && attr_split.is_none());
    let num_outputs = info.attrs.int("num_outputs");
    let n_out = info.node.output.len();
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let ax = norm_axis(axis, x.rank())?;
        let sp = if from_input {
            opt_ints_in(ins, 1)?
        } else {
            attr_split.clone()
        };
        let sizes = split_sizes(x.shape()[ax], sp.as_deref(), n_out, num_outputs)?;
        let mut outs = Vec::with_capacity(sizes.len());
        let mut start = 0usize;
        for s in sizes {
            let end = start + s;
            outs.push(Value::Tensor(map_array!(x, a => a
                .slice_axis(Axis(ax), ndarray::Slice::from(start..end))
                .to_owned())));
            start = end;
        }
        Ok(outs)
    }))
}

pub fn slice(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attrs = if info.opset < 10 {
        Some((
            info.attrs.ints("starts"),
            info.attrs.ints("ends"),
            info.attrs.ints("axes"),
        ))
    } else {
        None
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let (starts, ends, axes, steps) = match &attrs {
            Some((s, e, a)) => (
                s.clone()
                    .ok_or_else(|| KernelError::new("Slice needs 'starts'"))?,
                e.clone()
                    .ok_or_else(|| KernelError::new("Slice needs 'ends'"))?,
                a.clone(),
                None,
            ),
            None => (
                ints_in(ins, 1)?,
                ints_in(ins, 2)?,
                opt_ints_in(ins, 3)?,
                opt_ints_in(ins, 4)?,
            ),
        };
        let r = x.rank();
        let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
        let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
        if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
            bail!("starts, ends, axes and steps must have the same length");
        }
        let ax = norm_axes(&axes, r)?;
        let mut lists: Vec<Vec<usize>> = x.shape().iter().map(|&d| (0..d).collect()).collect();
        for (k, &a) in ax.iter().enumerate() {
            lists[a] = slice_indices(x.shape()[a], starts[k], ends[k], steps[k])?;
        }
        out1(gather_axes(x, &lists)?)
    }))
}

/// The bidirectional broadcast of Expand.
pub fn expand_tensor(x: &Tensor, shape: &[i64]) -> Result<Tensor, KernelError> {
    if shape.iter().any(|&d| d < 0) {
        bail!("shape {shape:?} has a negative dimension");
    }
    let target: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let out = super::broadcast_shapes(x.shape(), &target)?;
    // the output and one source position per element
    let n = crate::tensor::budget::check(&out, x.dtype().alloc_bytes() + 8)?;
    if n == 0 {
        return Ok(Tensor::zeros(x.dtype(), &out)?);
    }
    let off = out.len() - x.rank();
    let lists: Vec<Vec<Option<usize>>> = out
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let d = if i >= off { x.shape()[i - off] } else { 1 };
            (0..n).map(|j| Some(if d == 1 { 0 } else { j })).collect()
        })
        .collect();
    let mut in_shape = vec![1; off];
    in_shape.extend_from_slice(x.shape());
    let (pos, sh) = axes_positions(&in_shape, &lists)?;
    gather_flat(x, &pos, &sh)
}

pub fn expand(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        out1(expand_tensor(x, &ints_in(ins, 1)?)?)
    }))
}

pub fn tile(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let reps = ints_in(ins, 1)?;
        if reps.len() != x.rank() {
            bail!("repeats {reps:?} do not match rank {}", x.rank());
        }
        let mut out_shape = Vec::with_capacity(reps.len());
        for (a, (&d, &r)) in x.shape().iter().zip(&reps).enumerate() {
            if r < 0 {
                bail!("negative repeat {r}");
            }
            let n = d.checked_mul(r as usize).ok_or_else(|| {
                KernelError::new(format!("axis {a}: {d} repeated {r} times overflows"))
            })?;
            out_shape.push(n);
        }
        // the output and one source position per element
        crate::tensor::budget::check(&out_shape, x.dtype().alloc_bytes() + 8)?;
        let lists: Vec<Vec<usize>> = out_shape
            .iter()
            .zip(x.shape())
            .map(|(&n, &d)| (0..n).map(|i| i % d.max(1)).collect())
            .collect();
        out1(gather_axes(x, &lists)?)
    }))
}

/// Source index on one axis of Pad for output position `i`.
fn pad_src(i: i64, begin: i64, d: i64, mode: &str) -> Option<usize> {
    let s = i.saturating_sub(begin);
    if (0..d).contains(&s) {
        return Some(s as usize);
    }
    if d == 0 {
        return None;
    }
    match mode {
        "edge" => Some(s.clamp(0, d - 1) as usize),
        "wrap" => Some(s.rem_euclid(d) as usize),
        "reflect" => {
            if d == 1 {
                return Some(0);
            }
            let p = 2 * (d - 1);
            let m = s.rem_euclid(p);
            Some(if m < d { m } else { p - m } as usize)
        }
        _ => None,
    }
}

pub fn pad(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let mode = info.attrs.string_or("mode", "constant");
    if !["constant", "reflect", "edge", "wrap"].contains(&mode.as_str()) {
        bail!("unknown Pad mode '{mode}'");
    }
    let attr_pads = if info.opset < 2 {
        info.attrs.ints("paddings")
    } else if info.opset < 11 {
        info.attrs.ints("pads")
    } else {
        None
    };
    let attr_value = info.attrs.float_or("value", 0.0) as f64;
    let old = info.opset < 11;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let r = x.rank();
        let pads = if old {
            attr_pads
                .clone()
                .ok_or_else(|| KernelError::new("Pad needs 'pads'"))?
        } else {
            ints_in(ins, 1)?
        };
        let fill = if old {
            if x.dtype() == DataType::String {
                Tensor::scalar(String::new())
            } else {
                tensor_from_f64(x.dtype(), &[], vec![attr_value])?
            }
        } else {
            match crate::ops::kernel::opt_tensor_in(ins, 2)? {
                Some(v) if !v.is_empty() => {
                    v.reshape(&[]).or_else(|_| gather_flat(v, &[0], &[]))?
                }
                _ => Tensor::zeros(x.dtype(), &[])?,
            }
        };
        let axes = match if old { None } else { opt_ints_in(ins, 3)? } {
            Some(a) => norm_axes(&a, r)?,
            None => (0..r).collect(),
        };
        if pads.len() != 2 * axes.len() {
            bail!(
                "pads {pads:?} must have 2 values per padded axis ({} axes)",
                axes.len()
            );
        }
        let mut begin = vec![0i64; r];
        let mut end = vec![0i64; r];
        for (k, &a) in axes.iter().enumerate() {
            begin[a] = pads[k];
            end[a] = pads[k + axes.len()];
        }
        let mut lists = Vec::with_capacity(r);
        for a in 0..r {
            let d = x.shape()[a] as i64;
            let n = d
                .checked_add(begin[a])
                .and_then(|v| v.checked_add(end[a]))
                .filter(|&n| n >= 0 && n <= MAX_ELEMS as i64)
                .ok_or_else(|| {
                    KernelError::new(format!("pads {pads:?} give an invalid size on axis {a}"))
                })?;
            if mode != "constant" && d == 0 && n > 0 {
                bail!("cannot pad an empty axis in mode {mode}");
            }
            lists.push(
                (0..n)
                    .map(|i| pad_src(i, begin[a], d, &mode))
                    .collect::<Vec<_>>(),
            );
        }
        let (pos, shape) = axes_positions(x.shape(), &lists)?;
        out1(gather_flat_fill(x, &pos, &shape, &fill)?)
    }))
}

// ---------------------------------------------------------------------------
// Shape, Size, ConstantOfShape, Constant, Range, Trilu, EyeLike, CumSum,
// ReverseSequence, DepthToSpace, SpaceToDepth.

pub fn shape(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let start = info.attrs.int_or("start", 0);
    let end = info.attrs.int("end");
    Ok(Box::new(move |_, ins| {
        let x = match ins.first().copied().flatten() {
            Some(Value::Tensor(t)) => t,
            _ => bail!("Shape needs a tensor input"),
        };
        let r = x.rank() as i64;
        let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
        let s = clampi(start);
        let e = clampi(end.unwrap_or(r));
        let dims: Vec<i64> = if s < e {
            x.shape()[s..e].iter().map(|&d| d as i64).collect()
        } else {
            vec![]
        };
        out1(Tensor::from_vec(&[dims.len()], dims)?)
    }))
}

pub fn size(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        out1(Tensor::scalar(tensor_in(ins, 0)?.len() as i64))
    }))
}

pub fn constant_of_shape(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let value = match info.attrs.tensor("value") {
        Some(p) => crate::proto::from_proto(p)?,
        None => Tensor::scalar(0f32),
    };
    if value.len() != 1 {
        bail!("ConstantOfShape 'value' must have one element");
    }
    Ok(Box::new(move |_, ins| {
        let shape = ints_in(ins, 0)?;
        if shape.iter().any(|&d| d < 0) {
            bail!("shape {shape:?} has a negative dimension");
        }
        let sh: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        checked_numel(&sh)?;
        let filled = crate::map_array!(&value, a => ndarray::ArrayD::from_elem(
            IxDyn(&sh),
            a.iter().next().cloned().unwrap_or_default(),
        ));
        out1(filled)
    }))
}

pub fn constant(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let v = constant_value(&info.attrs)?;
    Ok(Box::new(move |_, _| out1(v.clone())))
}

pub fn range(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let s = tensor_in(ins, 0)?;
        let l = tensor_in(ins, 1)?;
        let d = tensor_in(ins, 2)?;
        if s.dtype() != l.dtype() || s.dtype() != d.dtype() {
            bail!("start, limit and delta must have one type");
        }
        if s.len() != 1 || l.len() != 1 || d.len() != 1 {
            bail!("start, limit and delta must be scalars");
        }
        let dt = s.dtype();
        if dt.is_int() {
            let (a, b, c) = (
                s.to_i64_vec()?[0] as i128,
                l.to_i64_vec()?[0] as i128,
                d.to_i64_vec()?[0] as i128,
            );
            if c == 0 {
                bail!("Range delta cannot be 0");
            }
            let (span, step) = if c < 0 { (a - b, -c) } else { (b - a, c) };
            let n = (span + step - 1).div_euclid(step).max(0);
            let Ok(len) = usize::try_from(n) else {
                bail!("Range has too many elements ({n})");
            };
            crate::tensor::budget::check(&[len], 16)?;
            let v: Vec<f64> = (0..n).map(|i| (a + i * c) as f64).collect();
            if dt == DataType::Int64 {
                let v: Vec<i64> = (0..n).map(|i| (a + i * c) as i64).collect();
                return out1(Tensor::from_vec(&[v.len()], v)?);
            }
            return out1(tensor_from_f64(dt, &[v.len()], v)?);
        }
        let f = |t: &Tensor| {
            t.to_f64_vec()
                .and_then(|v| v.first().copied())
                .ok_or_else(|| KernelError::new("Range needs numbers"))
        };
        let (a, b, c) = (f(s)?, f(l)?, f(d)?);
        if c == 0.0 {
            bail!("Range delta cannot be 0");
        }
        let n = ((b - a) / c).ceil().max(0.0);
        if !n.is_finite() || n >= u64::MAX as f64 {
            bail!("Range has too many elements ({n})");
        }
        crate::tensor::budget::check(&[n as usize], 16)?;
        let n = n as usize;
        if dt == DataType::Float {
            let (a, c) = (a as f32, c as f32);
            let v: Vec<f32> = (0..n).map(|i| a + i as f32 * c).collect();
            return out1(Tensor::from_vec(&[n], v)?);
        }
        out1(tensor_from_f64(
            dt,
            &[n],
            (0..n).map(|i| a + i as f64 * c).collect(),
        )?)
    }))
}

pub fn trilu(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let upper = info.attrs.int_or("upper", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let k = opt_ints_in(ins, 1)?
            .and_then(|v| v.first().copied())
            .unwrap_or(0);
        let r = x.rank();
        if r < 2 {
            bail!("Trilu needs rank >= 2, got {r}");
        }
        let (h, w) = (x.shape()[r - 2], x.shape()[r - 1]);
        let n = x.len();
        let pos: Vec<usize> = (0..n)
            .map(|p| {
                let j = (p % w.max(1)) as i64;
                let i = ((p / w.max(1)) % h.max(1)) as i64;
                let keep = if upper { j - i >= k } else { j - i <= k };
                if keep {
                    p
                } else {
                    usize::MAX
                }
            })
            .collect();
        let zero = Tensor::zeros(x.dtype(), &[])?;
        out1(gather_flat_fill(x, &pos, x.shape(), &zero)?)
    }))
}

pub fn eye_like(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dtype = match info.attrs.int("dtype") {
        Some(c) => Some(
            DataType::from_code(c as i32)
                .ok_or_else(|| KernelError::new(format!("unknown dtype {c}")))?,
        ),
        None => None,
    };
    let k = info.attrs.int_or("k", 0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if x.rank() != 2 {
            bail!("EyeLike needs a 2-D input, got rank {}", x.rank());
        }
        let (h, w) = (x.shape()[0], x.shape()[1]);
        let v: Vec<f64> = (0..h * w)
            .map(|p| {
                if (p % w) as i64 - (p / w) as i64 == k {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        out1(tensor_from_f64(dtype.unwrap_or(x.dtype()), &[h, w], v)?)
    }))
}

/// A running fold along one axis: CumSum (`+` from 0) and CumProd
/// (`*` from 1), inclusive or exclusive, forward or reversed.
#[derive(Clone, Copy, Debug)]
pub enum Cumulative {
    Sum,
    Prod,
}

fn cumulative_typed<T: Num>(
    x: &Tensor,
    ax: usize,
    op: Cumulative,
    exclusive: bool,
    reverse: bool,
) -> Result<Tensor, KernelError> {
    let a: &ndarray::ArrayD<T> = super::typed(x, "x")?;
    let (start, step): (T, fn(T, T) -> T) = match op {
        Cumulative::Sum => (T::zero(), T::add),
        Cumulative::Prod => (T::one(), T::mul),
    };
    let mut out = a.clone();
    for mut lane in out.lanes_mut(Axis(ax)) {
        let n = lane.len();
        let mut acc = start;
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let v = lane[i];
            if exclusive {
                lane[i] = acc;
                acc = step(acc, v);
            } else {
                acc = step(acc, v);
                lane[i] = acc;
            }
        }
    }
    Ok(T::wrap(out))
}

/// The kernel of CumSum / CumProd (axis as input 1).
pub fn cumulative(info: &NodeInfo, op: Cumulative) -> Result<Kernel, KernelError> {
    let exclusive = info.attrs.int_or("exclusive", 0) != 0;
    let reverse = info.attrs.int_or("reverse", 0) != 0;
    let name = match op {
        Cumulative::Sum => "CumSum",
        Cumulative::Prod => "CumProd",
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let axis = ints_in(ins, 1)?;
        let [axis] = axis[..] else {
            bail!("{name} axis must have one element")
        };
        let ax = norm_axis(axis, x.rank())?;
        out1(dispatch_num!(
            x,
            cumulative_typed(x, ax, op, exclusive, reverse),
            bail!("{name} does not accept {}", x.dtype())
        )?)
    }))
}

pub fn cumsum(info: &NodeInfo) -> Result<Kernel, KernelError> {
    cumulative(info, Cumulative::Sum)
}

pub fn reverse_sequence(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let time_axis = info.attrs.int_or("time_axis", 0);
    let batch_axis = info.attrs.int_or("batch_axis", 1);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let lens = ints_in(ins, 1)?;
        if x.rank() < 2 {
            bail!("ReverseSequence needs rank >= 2");
        }
        let ta = norm_axis(time_axis, x.rank())?;
        let ba = norm_axis(batch_axis, x.rank())?;
        if ta == ba || ta > 1 || ba > 1 {
            bail!("time_axis and batch_axis must be 0 and 1");
        }
        let sh = x.shape().to_vec();
        if lens.len() != sh[ba] {
            bail!(
                "sequence_lens has {} values, batch size is {}",
                lens.len(),
                sh[ba]
            );
        }
        if lens.iter().any(|&l| l < 0 || l as usize > sh[ta]) {
            bail!(
                "sequence_lens {lens:?} out of range for time size {}",
                sh[ta]
            );
        }
        let st = strides(&sh);
        let mut pos = Vec::with_capacity(x.len());
        for_each_index(&sh, |ix| {
            let l = lens[ix[ba]] as usize;
            let mut p: usize = ix.iter().zip(&st).map(|(a, b)| a * b).sum();
            let t = ix[ta];
            if t < l {
                p = p - t * st[ta] + (l - 1 - t) * st[ta];
            }
            pos.push(p);
        });
        out1(gather_flat(x, &pos, &sh)?)
    }))
}

pub fn depth_to_space(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let b = info
        .attrs
        .int("blocksize")
        .ok_or_else(|| KernelError::new("DepthToSpace needs 'blocksize'"))?;
    let crd = info.attrs.string_or("mode", "DCR") == "CRD";
    if b <= 0 {
        bail!("blocksize must be positive");
    }
    let b = b as usize;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let [n, c, h, w] = x.shape()[..] else {
            bail!("DepthToSpace needs a 4-D input")
        };
        if c % (b * b) != 0 {
            bail!("channels {c} not divisible by blocksize² {}", b * b);
        }
        let c2 = c / (b * b);
        let (shape6, perm) = if crd {
            ([n, c2, b, b, h, w], [0, 1, 4, 2, 5, 3])
        } else {
            ([n, b, b, c2, h, w], [0, 3, 4, 1, 5, 2])
        };
        let y = permute(&x.reshape(&shape6)?, &perm);
        out1(y.reshape(&[n, c2, h * b, w * b])?)
    }))
}

pub fn space_to_depth(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let b = info
        .attrs
        .int("blocksize")
        .ok_or_else(|| KernelError::new("SpaceToDepth needs 'blocksize'"))?;
    if b <= 0 {
        bail!("blocksize must be positive");
    }
    let b = b as usize;
    // DCR (default): the block offsets go before the channels; CRD: after.
    let perm = if info.attrs.string_or("mode", "DCR") == "CRD" {
        [0, 1, 3, 5, 2, 4]
    } else {
        [0, 3, 5, 1, 2, 4]
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let [n, c, h, w] = x.shape()[..] else {
            bail!("SpaceToDepth needs a 4-D input")
        };
        if h % b != 0 || w % b != 0 {
            bail!("spatial size {h}x{w} not divisible by blocksize {b}");
        }
        let y = permute(&x.reshape(&[n, c, h / b, b, w / b, b])?, &perm);
        out1(y.reshape(&[n, c * b * b, h / b, w / b])?)
    }))
}

/// Test helpers: build and run one kernel.
#[cfg(test)]
pub(crate) mod testing {
    pub(crate) use crate::ops::ODD_INPUT_OPS as MINE;

    use crate::ops::kernel::{KernelBuilder, KernelError, NodeInfo, RunCtx};
    use crate::ops::Attrs;
    use crate::proto::attribute_proto::AttributeType;
    use crate::proto::{AttributeProto, NodeProto};
    use crate::tensor::{Tensor, Value};

    pub fn ints(name: &str, v: &[i64]) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(AttributeType::Ints as i32),
            ints: v.to_vec(),
            ..Default::default()
        }
    }

    pub fn int(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(AttributeType::Int as i32),
            i: Some(v),
            ..Default::default()
        }
    }

    pub fn string(name: &str, v: &str) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(AttributeType::String as i32),
            s: Some(v.as_bytes().to_vec()),
            ..Default::default()
        }
    }

    /// Runs `b` on the inputs (`None` = absent) with `n_out` outputs.
    pub fn run(
        b: KernelBuilder,
        opset: i64,
        attrs: Vec<AttributeProto>,
        ins: Vec<Option<Tensor>>,
        n_out: usize,
    ) -> Result<Vec<Tensor>, KernelError> {
        let node = NodeProto {
            attribute: attrs,
            output: (0..n_out).map(|i| format!("y{i}")).collect(),
            ..Default::default()
        };
        let compile = |_: &crate::proto::GraphProto| Err(KernelError::new("no subgraphs"));
        let info = NodeInfo {
            node: &node,
            opset,
            attrs: Attrs::new(&node),
            compile: &compile,
        };
        let k = b(&info)?;
        let vals: Vec<Option<Value>> = ins.into_iter().map(|t| t.map(Value::Tensor)).collect();
        let refs: Vec<Option<&Value>> = vals.iter().map(|v| v.as_ref()).collect();
        let mut runner = |_: &dyn crate::ops::kernel::Subgraph, _: Vec<(String, Value)>| {
            Err(KernelError::new("no subgraphs"))
        };
        let mut cx = RunCtx {
            runner: &mut runner,
            parts: None,
        };
        Ok(k(&mut cx, &refs)?
            .into_iter()
            .filter_map(|v| v.into_tensor())
            .collect())
    }

    pub fn i64s(shape: &[usize], v: Vec<i64>) -> Tensor {
        Tensor::from_vec(shape, v).expect("test tensor")
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn slice_negative_steps_and_clamping() {
        let x = v1(&(0..10).collect::<Vec<_>>());
        let y = run(
            slice,
            13,
            vec![],
            vec![x.clone(), v1(&[-1]), v1(&[-100]), None, v1(&[-3])],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[4], vec![9, 6, 3, 0]));
        let y = run(
            slice,
            13,
            vec![],
            vec![x.clone(), v1(&[20]), v1(&[-20]), v1(&[0]), v1(&[-4])],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[3], vec![9, 5, 1]));
        let y = run(
            slice,
            13,
            vec![],
            vec![x.clone(), v1(&[3]), v1(&[i64::MAX])],
            1,
        )
        .unwrap();
        assert_eq!(y[0].len(), 7);
        assert!(run(
            slice,
            13,
            vec![],
            vec![x, v1(&[0]), v1(&[1]), v1(&[0]), v1(&[0])],
            1
        )
        .is_err());
    }

    #[test]
    fn pad_modes() {
        let x = v1(&[1, 2, 3]);
        let pads = v1(&[2, 2]);
        let mode = |m: &str| {
            run(
                pad,
                18,
                vec![string("mode", m)],
                vec![x.clone(), pads.clone()],
                1,
            )
            .unwrap()
        };
        assert_eq!(mode("reflect")[0], i64s(&[7], vec![3, 2, 1, 2, 3, 2, 1]));
        assert_eq!(mode("edge")[0], i64s(&[7], vec![1, 1, 1, 2, 3, 3, 3]));
        assert_eq!(mode("wrap")[0], i64s(&[7], vec![2, 3, 1, 2, 3, 1, 2]));
        let crop = run(
            pad,
            18,
            vec![],
            vec![x, v1(&[-1, 1]), Some(Tensor::scalar(9i64))],
            1,
        )
        .unwrap();
        assert_eq!(crop[0], i64s(&[3], vec![2, 3, 9]));
    }

    #[test]
    fn range_and_split() {
        let r = run(
            range,
            11,
            vec![],
            vec![
                Some(Tensor::scalar(10i32)),
                Some(Tensor::scalar(4i32)),
                Some(Tensor::scalar(-3i32)),
            ],
            1,
        )
        .unwrap();
        assert_eq!(r[0], Tensor::from_vec(&[2], vec![10i32, 7]).unwrap());
        let zero = run(
            range,
            11,
            vec![],
            vec![
                Some(Tensor::scalar(1i64)),
                Some(Tensor::scalar(1i64)),
                Some(Tensor::scalar(0i64)),
            ],
            1,
        );
        assert!(zero.is_err(), "delta 0 must fail");
        let s = run(
            split,
            18,
            vec![int("num_outputs", 3)],
            vec![v1(&[1, 2, 3, 4, 5])],
            3,
        )
        .unwrap();
        assert_eq!(s.iter().map(|t| t.len()).collect::<Vec<_>>(), vec![2, 2, 1]);
        assert!(run(split, 13, vec![], vec![v1(&[1, 2, 3]), v1(&[1, 1])], 2).is_err());
    }

    #[test]
    fn expand_tile_and_trilu() {
        let x = Some(i64s(&[2, 1], vec![1, 2]));
        let e = run(expand, 13, vec![], vec![x.clone(), v1(&[2, 3])], 1).unwrap();
        assert_eq!(e[0], i64s(&[2, 3], vec![1, 1, 1, 2, 2, 2]));
        let t = run(tile, 13, vec![], vec![x, v1(&[2, 2])], 1).unwrap();
        assert_eq!(t[0], i64s(&[4, 2], vec![1, 1, 2, 2, 1, 1, 2, 2]));
        let m = Some(i64s(&[2, 3], vec![1, 2, 3, 4, 5, 6]));
        let lower = run(
            trilu,
            14,
            vec![int("upper", 0)],
            vec![m, Some(Tensor::scalar(1i64))],
            1,
        )
        .unwrap();
        assert_eq!(lower[0], i64s(&[2, 3], vec![1, 2, 0, 4, 5, 6]));
        let u = run(
            unsqueeze,
            11,
            vec![ints("axes", &[0, -1])],
            vec![v1(&[7, 8])],
            1,
        )
        .unwrap();
        assert_eq!(u[0].shape(), &[1, 2, 1]);
        assert!(run(squeeze, 11, vec![ints("axes", &[0])], vec![v1(&[7, 8])], 1).is_err());
    }
}
