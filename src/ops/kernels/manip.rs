//! Index helpers for kernels of any family: strides and index walks,
//! gathers by flat positions or per-axis position lists, permutes, integer
//! inputs and one-tensor outputs. The manipulation operators themselves live
//! in `src/ops/manip/`; this file keeps the building blocks other families
//! (reduce, signal, control, nn's col2im/max_unpool, ml) call at this path.

use super::norm_axis;
use crate::ops::kernel::{tensor_in, KernelError};
use crate::tensor::{DataType, Tensor, Value};
use crate::{bail, map_array};
use ndarray::IxDyn;

/// `Concat`'s join, also used by `ConcatFromSequence` and the loops' scan outputs.
pub(crate) use crate::ops::manip::concat_tensors;

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

/// One tensor output.
pub fn out1(t: Tensor) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(t)])
}
