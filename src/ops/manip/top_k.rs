//! `TopK`: the `k` largest (or smallest) elements along `axis` and their
//! indices, ties to the lower index.

use super::sort_keys::{key_cmp, keys};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{checked_numel, gather_flat, ints_in};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(mut shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        cx.set_tensor(1, DataType::Int64, None);
        return Ok(());
    };
    let ax = crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", -1), shape.len())?;
    let k = cx.value(1).and_then(|v| v.values.first().cloned());
    shape[ax] = k;
    cx.set_tensor(0, elem, Some(shape.clone()));
    cx.set_tensor(1, DataType::Int64, Some(shape));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -1);
    let largest = info.attrs.int_or("largest", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let k = match ints_in(ins, 1)?[..] {
            [k] => k,
            _ => bail!("TopK K must have one element"),
        };
        let ax = crate::ops::kernels::norm_axis(axis, x.rank())?;
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
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn top_k_prefers_lower_index_on_ties() {
        let x = v1(&[3, 1, 3, 2]);
        let y = run(kernel, 11, vec![], vec![x.clone(), v1(&[2])], 2).unwrap();
        assert_eq!(y[0], i64s(&[2], vec![3, 3]));
        assert_eq!(y[1], i64s(&[2], vec![0, 2]));
        let y = run(
            kernel,
            11,
            vec![int("largest", 0)],
            vec![x.clone(), v1(&[2])],
            2,
        )
        .unwrap();
        assert_eq!(y[1], i64s(&[2], vec![1, 3]));
        assert!(run(kernel, 11, vec![], vec![x, v1(&[5])], 2).is_err());
    }
}
