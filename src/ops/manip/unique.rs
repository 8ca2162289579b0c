//! `Unique`: the distinct elements (or slices along `axis`), sorted or in
//! first-seen order, with their indices, inverse indices and counts.

use super::sort_keys::{keys, slice_cmp, Key};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{gather_axes, permute};
use crate::ops::shape_rules::product;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;
use std::cmp::Ordering;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let u = cx.fresh();
    let (y, m): (Option<Vec<Dim>>, Dim) = match cx.attrs.int("axis") {
        None => (Some(vec![Some(u.clone())]), cx.shape(0).and_then(product)),
        Some(a) => match cx.shape(0).map(|s| s.to_vec()) {
            Some(mut s) => {
                let ax = crate::ops::shape_rules::norm_axis(a, s.len())?;
                let m = s[ax].clone();
                s[ax] = Some(u.clone());
                (Some(s), m)
            }
            None => (None, None),
        },
    };
    cx.set_tensor(0, elem, y);
    cx.set_tensor(1, DataType::Int64, Some(vec![Some(u.clone())]));
    cx.set_tensor(2, DataType::Int64, Some(vec![m]));
    cx.set_tensor(3, DataType::Int64, Some(vec![Some(u)]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let sorted = info.attrs.int_or("sorted", 1) != 0;
    let axis = info.attrs.int("axis");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let (x, ax) = match axis {
            Some(a) => (x.clone(), crate::ops::kernels::norm_axis(a, x.rank())?),
            None => (x.reshape(&[x.len()])?, 0),
        };
        let m = x.shape()[ax];
        // slices along the axis, each as a key vector
        let perm: Vec<usize> = std::iter::once(ax)
            .chain((0..x.rank()).filter(|&a| a != ax))
            .collect();
        let moved = permute(&x, &perm);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn unique_unsorted_outputs() {
        let y = run(
            kernel,
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
        let s = run(kernel, 11, vec![], vec![v1(&[2, 1, 2, 3])], 4).unwrap();
        assert_eq!(s[0], i64s(&[3], vec![1, 2, 3]));
        assert_eq!(s[2], i64s(&[4], vec![1, 0, 1, 2]));
    }
}
