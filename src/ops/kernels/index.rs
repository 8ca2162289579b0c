//! Index-driven kernels: Gather, GatherElements, GatherND, ScatterElements,
//! ScatterND, Scatter, OneHot, Compress, NonZero, Unique, TopK.

use super::elementwise::Num;
use super::manip::{checked_numel, for_each_index, gather_axes, gather_flat, ints_in, strides};
use super::norm_axis;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};
use crate::{bail, dispatch_num, map_pair};
use ndarray::{ArrayD, IxDyn};
use std::cmp::Ordering;

fn out1(t: Tensor) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(t)])
}

/// An index normalised against a dimension (negative counts from the end).
fn norm_index(i: i64, d: usize) -> Result<usize, KernelError> {
    let n = d as i64;
    let v = if i < 0 { i + n } else { i };
    if v < 0 || v >= n {
        bail!("index {i} is out of range for a dimension of size {d}");
    }
    Ok(v as usize)
}

pub fn gather(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let idx = it.to_i64_vec()?;
        let ax = norm_axis(axis, x.rank())?;
        let sh = x.shape();
        let d = sh[ax];
        let outer: usize = sh[..ax].iter().product();
        let inner: usize = sh[ax + 1..].iter().product();
        let idx: Vec<usize> = idx
            .iter()
            .map(|&i| norm_index(i, d))
            .collect::<Result<_, _>>()?;
        let mut shape = sh[..ax].to_vec();
        shape.extend_from_slice(it.shape());
        shape.extend_from_slice(&sh[ax + 1..]);
        let n = checked_numel(&shape)?;
        let mut pos = Vec::with_capacity(n);
        for o in 0..outer {
            for &j in &idx {
                for i in 0..inner {
                    pos.push((o * d + j) * inner + i);
                }
            }
        }
        out1(gather_flat(x, &pos, &shape)?)
    }))
}

/// Flat data positions addressed by GatherElements/ScatterElements indices.
fn element_positions(
    data_shape: &[usize],
    idx_shape: &[usize],
    idx: &[i64],
    ax: usize,
) -> Result<Vec<usize>, KernelError> {
    if idx_shape.len() != data_shape.len() {
        bail!(
            "indices rank {} differs from data rank {}",
            idx_shape.len(),
            data_shape.len()
        );
    }
    for (k, (&a, &b)) in idx_shape.iter().zip(data_shape).enumerate() {
        if k != ax && a > b {
            bail!("indices shape {idx_shape:?} exceeds data shape {data_shape:?} on axis {k}");
        }
    }
    let st = strides(data_shape);
    let mut pos = Vec::with_capacity(idx.len());
    let mut err = None;
    let mut n = 0usize;
    for_each_index(idx_shape, |ix| {
        let mut p = 0usize;
        for (k, &i) in ix.iter().enumerate() {
            let c = if k == ax {
                match norm_index(idx[n], data_shape[k]) {
                    Ok(c) => c,
                    Err(e) => {
                        err.get_or_insert(e);
                        0
                    }
                }
            } else {
                i
            };
            p += c * st[k];
        }
        pos.push(p);
        n += 1;
    });
    match err {
        Some(e) => Err(e),
        None => Ok(pos),
    }
}

pub fn gather_elements(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let ax = norm_axis(axis, x.rank())?;
        let pos = element_positions(x.shape(), it.shape(), &it.to_i64_vec()?, ax)?;
        out1(gather_flat(x, &pos, it.shape())?)
    }))
}

/// GatherND/ScatterND: for each index tuple, the flat start of the
/// addressed slice; also the slice length and the tuple grid shape.
fn nd_positions(
    data_shape: &[usize],
    it: &Tensor,
    batch: usize,
) -> Result<(Vec<usize>, usize, Vec<usize>), KernelError> {
    let ish = it.shape();
    let q = ish.len();
    let r = data_shape.len();
    if q == 0 {
        bail!("indices must have rank >= 1");
    }
    let k = ish[q - 1];
    if batch >= q || batch >= r || batch + k > r {
        bail!(
            "indices shape {ish:?} does not fit data shape {data_shape:?} with batch_dims {batch}"
        );
    }
    if ish[..batch] != data_shape[..batch] {
        bail!("batch dimensions of indices {ish:?} and data {data_shape:?} differ");
    }
    let idx = it.to_i64_vec()?;
    let st = strides(data_shape);
    let slice: usize = data_shape[batch + k..].iter().product();
    let grid = ish[..q - 1].to_vec();
    let tuples: usize = grid.iter().product();
    let per_batch: usize = ish[batch..q - 1].iter().product();
    let mut starts = Vec::with_capacity(tuples);
    for t in 0..tuples {
        let b = t / per_batch.max(1);
        // batch coordinates from the flat batch number
        let mut p = 0usize;
        let mut rem = b;
        for j in (0..batch).rev() {
            p += (rem % data_shape[j]) * st[j];
            rem /= data_shape[j];
        }
        for j in 0..k {
            p += norm_index(idx[t * k + j], data_shape[batch + j])? * st[batch + j];
        }
        starts.push(p);
    }
    Ok((starts, slice, grid))
}

pub fn gather_nd(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let batch = info.attrs.int_or("batch_dims", 0);
    if batch < 0 {
        bail!("batch_dims must be >= 0");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let (starts, slice, grid) = nd_positions(x.shape(), it, batch as usize)?;
        let k = it.shape()[it.rank() - 1];
        let mut shape = grid;
        shape.extend_from_slice(&x.shape()[batch as usize + k..]);
        checked_numel(&shape)?;
        let pos: Vec<usize> = starts.iter().flat_map(|&s| s..s + slice).collect();
        out1(gather_flat(x, &pos, &shape)?)
    }))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Reduction {
    None,
    Add,
    Mul,
    Max,
    Min,
}

fn reduction(info: &NodeInfo) -> Result<Reduction, KernelError> {
    Ok(match info.attrs.string_or("reduction", "none").as_str() {
        "none" => Reduction::None,
        "add" => Reduction::Add,
        "mul" => Reduction::Mul,
        "max" => Reduction::Max,
        "min" => Reduction::Min,
        other => bail!("unknown reduction '{other}'"),
    })
}

fn scatter_red<T: Num>(
    data: &Tensor,
    upd: &Tensor,
    pos: &[usize],
    red: Reduction,
) -> Result<Tensor, KernelError> {
    let d: &ArrayD<T> = super::typed(data, "data")?;
    let u: &ArrayD<T> = super::typed(upd, "updates")?;
    let mut v: Vec<T> = d.iter().copied().collect();
    for (&p, &x) in pos.iter().zip(u.iter()) {
        let Some(slot) = v.get_mut(p) else {
            bail!("scatter position {p} out of range")
        };
        *slot = match red {
            Reduction::None => x,
            Reduction::Add => slot.add(x),
            Reduction::Mul => slot.mul(x),
            Reduction::Max => {
                if x > *slot {
                    x
                } else {
                    *slot
                }
            }
            Reduction::Min => {
                if x < *slot {
                    x
                } else {
                    *slot
                }
            }
        };
    }
    Ok(T::wrap(ArrayD::from_shape_vec(IxDyn(d.shape()), v)?))
}

#[allow(clippy::clone_on_copy)]
/// Writes (or combines) `upd`'s elements into a copy of `data` at flat positions.
fn scatter_apply(
    data: &Tensor,
    upd: &Tensor,
    pos: &[usize],
    red: Reduction,
) -> Result<Tensor, KernelError> {
    if pos.len() != upd.len() {
        bail!("{} updates for {} positions", upd.len(), pos.len());
    }
    if red == Reduction::None {
        return Ok(map_pair!(data, upd, d, u => {
            // a contiguous buffer is copied as one block
            let mut v: Vec<_> = match d.as_slice() {
                Some(s) => s.to_vec(),
                None => d.iter().cloned().collect(),
            };
            for (&p, x) in pos.iter().zip(u.iter()) {
                let Some(slot) = v.get_mut(p) else { bail!("scatter position {p} out of range") };
                *slot = x.clone();
            }
            ArrayD::from_shape_vec(IxDyn(d.shape()), v)?
        }));
    }
    if data.dtype() != upd.dtype() {
        bail!("data is {}, updates are {}", data.dtype(), upd.dtype());
    }
    dispatch_num!(
        data,
        scatter_red(data, upd, pos, red),
        bail!("reduction {red:?} does not accept {}", data.dtype())
    )
}

pub fn scatter_elements(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let red = reduction(info)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let u = tensor_in(ins, 2)?;
        if u.shape() != it.shape() {
            bail!(
                "updates shape {:?} differs from indices shape {:?}",
                u.shape(),
                it.shape()
            );
        }
        let ax = norm_axis(axis, x.rank())?;
        let pos = element_positions(x.shape(), it.shape(), &it.to_i64_vec()?, ax)?;
        out1(scatter_apply(x, u, &pos, red)?)
    }))
}

pub fn scatter_nd(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let red = reduction(info)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let u = tensor_in(ins, 2)?;
        let (starts, slice, grid) = nd_positions(x.shape(), it, 0)?;
        let k = it.shape()[it.rank() - 1];
        let mut want = grid;
        want.extend_from_slice(&x.shape()[k..]);
        if u.shape() != want.as_slice() {
            bail!("updates shape {:?}, expected {want:?}", u.shape());
        }
        let pos: Vec<usize> = starts.iter().flat_map(|&s| s..s + slice).collect();
        out1(scatter_apply(x, u, &pos, red)?)
    }))
}

pub fn one_hot(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -1);
    Ok(Box::new(move |_, ins| {
        let it = tensor_in(ins, 0)?;
        let dt = tensor_in(ins, 1)?;
        let vals = tensor_in(ins, 2)?;
        if vals.len() != 2 {
            bail!("OneHot values must have 2 elements");
        }
        let depth = dt
            .to_f64_vec()
            .and_then(|v| v.first().copied())
            .ok_or_else(|| KernelError::new("OneHot depth must be one number"))?;
        if depth.is_nan() || depth < 1.0 || depth > super::manip::MAX_ELEMS as f64 {
            bail!("OneHot depth {depth} is invalid");
        }
        let depth = depth as i64;
        let idx: Vec<i64> = it
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("OneHot indices must be numeric"))?
            .into_iter()
            .map(|v| v as i64)
            .collect();
        let r = it.rank() + 1;
        let ax = norm_axis(axis, r)?;
        let mut shape = it.shape().to_vec();
        shape.insert(ax, depth as usize);
        let n = checked_numel(&shape)?;
        let outer: usize = it.shape()[..ax].iter().product();
        let inner: usize = it.shape()[ax..].iter().product();
        let mut pos = Vec::with_capacity(n);
        for o in 0..outer {
            for d in 0..depth {
                for i in 0..inner {
                    let v = idx[o * inner + i];
                    let v = if v < 0 { v + depth } else { v };
                    pos.push(usize::from(v == d));
                }
            }
        }
        let flat = vals.reshape(&[2])?;
        out1(gather_flat(&flat, &pos, &shape)?)
    }))
}

pub fn compress(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int("axis");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let cond = tensor_in(ins, 1)?.to_i64_vec()?;
        if !cond.is_empty() && tensor_in(ins, 1)?.rank() != 1 {
            bail!("condition must be 1-D");
        }
        let (x, ax) = match axis {
            Some(a) => (x.clone(), norm_axis(a, x.rank())?),
            None => (x.reshape(&[x.len()])?, 0),
        };
        let d = x.shape()[ax];
        if cond.len() > d {
            bail!("condition has {} values, axis has {d}", cond.len());
        }
        let sel: Vec<usize> = cond
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .map(|(i, _)| i)
            .collect();
        let mut lists: Vec<Vec<usize>> = x.shape().iter().map(|&n| (0..n).collect()).collect();
        lists[ax] = sel;
        out1(gather_axes(&x, &lists)?)
    }))
}

pub fn non_zero(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        let nz: Vec<bool> = match x.string_values() {
            Some(s) => s.iter().map(|v| !v.is_empty()).collect(),
            None => x
                .to_f64_vec()
                .ok_or_else(|| KernelError::new("NonZero needs numbers"))?
                .iter()
                .map(|&v| v != 0.0)
                .collect(),
        };
        let r = x.rank();
        let mut coords: Vec<Vec<i64>> = vec![vec![]; r];
        let mut k = 0usize;
        let mut count = 0usize;
        for_each_index(x.shape(), |ix| {
            if nz[k] {
                for (a, &i) in ix.iter().enumerate() {
                    coords[a].push(i as i64);
                }
                count += 1;
            }
            k += 1;
        });
        let count = if r == 0 {
            usize::from(nz.first() == Some(&true))
        } else {
            count
        };
        let flat: Vec<i64> = coords.concat();
        out1(Tensor::from_vec(&[r, count], flat)?)
    }))
}

/// A totally ordered element key (ints exactly, floats by value, strings).
#[derive(Clone, Debug)]
enum Key {
    I(i128),
    F(f64),
    S(String),
}

fn key_cmp(a: &Key, b: &Key) -> Ordering {
    match (a, b) {
        (Key::I(x), Key::I(y)) => x.cmp(y),
        (Key::F(x), Key::F(y)) => x.partial_cmp(y).unwrap_or_else(|| x.total_cmp(y)),
        (Key::S(x), Key::S(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

fn keys(t: &Tensor) -> Result<Vec<Key>, KernelError> {
    Ok(match t {
        Tensor::Str(a) => a.iter().map(|s| Key::S(s.clone())).collect(),
        Tensor::U64(a) => a.iter().map(|&v| Key::I(v as i128)).collect(),
        t if t.dtype().is_int() || t.dtype() == DataType::Bool => t
            .to_i64_vec()?
            .into_iter()
            .map(|v| Key::I(v as i128))
            .collect(),
        t => t
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("unsupported element type"))?
            .into_iter()
            .map(Key::F)
            .collect(),
    })
}

fn slice_cmp(a: &[Key], b: &[Key]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c = key_cmp(x, y);
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

pub fn unique(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let sorted = info.attrs.int_or("sorted", 1) != 0;
    let axis = info.attrs.int("axis");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let (x, ax) = match axis {
            Some(a) => (x.clone(), norm_axis(a, x.rank())?),
            None => (x.reshape(&[x.len()])?, 0),
        };
        let m = x.shape()[ax];
        // slices along the axis, each as a key vector
        let perm: Vec<usize> = std::iter::once(ax)
            .chain((0..x.rank()).filter(|&a| a != ax))
            .collect();
        let moved = super::manip::permute(&x, &perm);
        let all = keys(&moved)?;
        let per = all.len().checked_div(m).unwrap_or(0);
        let slices: Vec<&[Key]> = (0..m).map(|i| &all[i * per..(i + 1) * per]).collect();
        // unique slices in first-occurrence order
        let mut firsts: Vec<usize> = Vec::new();
        let mut owner = vec![0usize; m];
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| slice_cmp(slices[a], slices[b]).then(a.cmp(&b)));
        let mut group_first = vec![0usize; m];
        for (k, &i) in order.iter().enumerate() {
            if k > 0 && slice_cmp(slices[order[k - 1]], slices[i]) == Ordering::Equal {
                group_first[i] = group_first[order[k - 1]];
            } else {
                group_first[i] = i;
            }
        }
        firsts.extend((0..m).filter(|&i| group_first[i] == i));
        if sorted {
            firsts.sort_by(|&a, &b| slice_cmp(slices[a], slices[b]));
        }
        let mut rank_of = vec![0usize; m];
        for (k, &f) in firsts.iter().enumerate() {
            rank_of[f] = k;
        }
        let mut counts = vec![0i64; firsts.len()];
        for i in 0..m {
            owner[i] = rank_of[group_first[i]];
            counts[owner[i]] += 1;
        }
        let mut lists: Vec<Vec<usize>> = x.shape().iter().map(|&n| (0..n).collect()).collect();
        lists[ax] = firsts.clone();
        let y = gather_axes(&x, &lists)?;
        let u = firsts.len();
        Ok(vec![
            Value::Tensor(y),
            Value::Tensor(Tensor::from_vec(
                &[u],
                firsts.iter().map(|&i| i as i64).collect(),
            )?),
            Value::Tensor(Tensor::from_vec(
                &[m],
                owner.iter().map(|&i| i as i64).collect(),
            )?),
            Value::Tensor(Tensor::from_vec(&[u], counts)?),
        ])
    }))
}

pub fn top_k(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -1);
    let largest = info.attrs.int_or("largest", 1) != 0;
    let attr_k = if info.opset < 10 {
        info.attrs.int("k")
    } else {
        None
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let k = match attr_k {
            Some(k) => k,
            None => match ints_in(ins, 1)?[..] {
                [k] => k,
                _ => bail!("TopK K must have one element"),
            },
        };
        let ax = norm_axis(axis, x.rank())?;
        let n = x.shape()[ax];
        if k < 0 || k as usize > n {
            bail!("K = {k} is out of range for an axis of size {n}");
        }
        let k = k as usize;
        let all = keys(x)?;
        let outer: usize = x.shape()[..ax].iter().product();
        let inner: usize = x.shape()[ax + 1..].iter().product();
        let mut shape = x.shape().to_vec();
        shape[ax] = k;
        let total = checked_numel(&shape)?;
        let mut pos = vec![0usize; total];
        let mut idx = vec![0i64; total];
        let mut lane: Vec<usize> = Vec::with_capacity(n);
        for o in 0..outer {
            for i in 0..inner {
                let at = |j: usize| (o * n + j) * inner + i;
                lane.clear();
                lane.extend(0..n);
                lane.sort_by(|&a, &b| {
                    let c = key_cmp(&all[at(a)], &all[at(b)]);
                    let c = if largest { c.reverse() } else { c };
                    c.then(a.cmp(&b))
                });
                for (j, &src) in lane.iter().take(k).enumerate() {
                    let dst = (o * k + j) * inner + i;
                    pos[dst] = at(src);
                    idx[dst] = src as i64;
                }
            }
        }
        Ok(vec![
            Value::Tensor(gather_flat(x, &pos, &shape)?),
            Value::Tensor(Tensor::from_vec(&shape, idx)?),
        ])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernels::manip::testing::*;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn top_k_prefers_lower_index_on_ties() {
        let x = v1(&[3, 1, 3, 2]);
        let y = run(top_k, 11, vec![], vec![x.clone(), v1(&[2])], 2).unwrap();
        assert_eq!(y[0], i64s(&[2], vec![3, 3]));
        assert_eq!(y[1], i64s(&[2], vec![0, 2]));
        let y = run(
            top_k,
            11,
            vec![int("largest", 0)],
            vec![x.clone(), v1(&[2])],
            2,
        )
        .unwrap();
        assert_eq!(y[1], i64s(&[2], vec![1, 3]));
        assert!(run(top_k, 11, vec![], vec![x, v1(&[5])], 2).is_err());
    }

    #[test]
    fn unique_unsorted_outputs() {
        let y = run(
            unique,
            11,
            vec![int("sorted", 0)],
            vec![v1(&[2, 1, 2, 3])],
            4,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[3], vec![2, 1, 3]));
        assert_eq!(y[1], i64s(&[3], vec![0, 1, 3]));
        assert_eq!(y[2], i64s(&[4], vec![0, 1, 0, 2]));
        assert_eq!(y[3], i64s(&[3], vec![2, 1, 1]));
        let s = run(unique, 11, vec![], vec![v1(&[2, 1, 2, 3])], 4).unwrap();
        assert_eq!(s[0], i64s(&[3], vec![1, 2, 3]));
        assert_eq!(s[2], i64s(&[4], vec![1, 0, 1, 2]));
    }

    #[test]
    fn scatter_elements_reduction_and_bounds() {
        let data = v1(&[1, 1, 1]);
        let idx = v1(&[0, 0, 2]);
        let upd = v1(&[2, 3, 5]);
        let y = run(
            scatter_elements,
            18,
            vec![string("reduction", "mul")],
            vec![data.clone(), idx, upd.clone()],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[3], vec![6, 1, 5]));
        let bad = run(
            scatter_elements,
            18,
            vec![],
            vec![data, v1(&[0, 3, 1]), upd],
            1,
        );
        assert!(bad.is_err());
    }

    #[test]
    fn gather_nd_with_batch_dims() {
        // data [2,2,2], indices [2,1] with batch_dims=1 → data[b, idx[b]]
        let data = Some(i64s(&[2, 2, 2], (0..8).collect()));
        let idx = Some(i64s(&[2, 1], vec![1, 0]));
        let y = run(
            gather_nd,
            13,
            vec![int("batch_dims", 1)],
            vec![data, idx],
            1,
        )
        .unwrap();
        assert_eq!(y[0], i64s(&[2, 2], vec![2, 3, 4, 5]));
    }

    #[test]
    fn gather_negative_and_out_of_range() {
        let data = Some(i64s(&[3, 2], (0..6).collect()));
        let y = run(gather, 13, vec![], vec![data.clone(), v1(&[-1, 0])], 1).unwrap();
        assert_eq!(y[0], i64s(&[2, 2], vec![4, 5, 0, 1]));
        assert!(run(gather, 13, vec![], vec![data, v1(&[3])], 1).is_err());
    }
}

#[cfg(test)]
mod robustness {
    use crate::ops::kernels::manip::testing::{int, run, string};
    use crate::tensor::Tensor;

    use crate::ops::kernels::manip::testing::MINE;

    /// Odd inputs (empty, scalar, huge or negative values, wrong types)
    /// must give errors, never panics.
    #[test]
    fn odd_inputs_never_panic() {
        let pool: Vec<Option<Tensor>> = vec![
            None,
            Some(Tensor::scalar(3i64)),
            Some(Tensor::from_vec::<i64>(&[0], vec![]).unwrap()),
            Some(Tensor::from_vec(&[3], vec![-5i64, 100, i64::MAX]).unwrap()),
            Some(Tensor::from_vec(&[2], vec![i64::MIN, -1i64]).unwrap()),
            Some(Tensor::from_vec(&[2, 3], vec![1f32, -2., 0., f32::NAN, 5., 6.]).unwrap()),
            Some(Tensor::from_vec(&[1, 2, 0], vec![0i32; 0]).unwrap()),
            Some(Tensor::from_vec(&[2, 1], vec![true, false]).unwrap()),
            Some(Tensor::from_vec(&[1, 4, 2, 2], (0..16).map(|v| v as f32).collect()).unwrap()),
        ];
        let ops: Vec<(&str, crate::ops::kernel::KernelBuilder)> = crate::ops::all()
            .filter(|d| d.domain.is_empty() && MINE.contains(&d.op_type))
            .map(|d| (d.op_type, d.kernel))
            .collect();
        assert!(ops.len() > 40, "{} ops", ops.len());
        let mut ran = 0usize;
        let attr_sets = [
            vec![],
            vec![int("axis", 1)],
            vec![int("axis", -7)],
            vec![string("mode", "reflect")],
            vec![int("blocksize", 2), string("mode", "CRD")],
            vec![int("batch_dims", 1)],
            vec![int("keepdims", 0), int("select_last_index", 1)],
            vec![string("reduction", "max")],
        ];
        for (name, b) in ops {
            for (opset, attrs) in [9, 13, 18]
                .into_iter()
                .flat_map(|o| attr_sets.iter().map(move |a| (o, a)))
            {
                for a in &pool {
                    for c in &pool {
                        for e in pool.iter().take(5) {
                            let ins = vec![a.clone(), c.clone(), e.clone()];
                            let r = std::panic::catch_unwind(|| {
                                run(b, opset, attrs.clone(), ins.clone(), 2)
                            });

                            match r {
                                Ok(Ok(_)) => ran += 1,
                                Ok(Err(_)) => {}
                                Err(_) => panic!("{name} (opset {opset}) panicked on {ins:?}"),
                            }
                        }
                    }
                }
            }
        }
        assert!(ran > 1000, "only {ran} successful runs");
    }
}
