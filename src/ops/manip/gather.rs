//! `Gather`: slices of the data along `axis` picked by an index tensor
//! (negative indices count from the end).

use super::index_positions::norm_index;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{checked_numel, gather_flat, out1};
use crate::ops::{InferCtx, ShapeError, SymValue};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let (Some(data), Some(ind)) = (
        cx.shape(0).map(|s| s.to_vec()),
        cx.shape(1).map(|s| s.to_vec()),
    ) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let ax = crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", 0), data.len())?;
    let mut out = data[..ax].to_vec();
    out.extend(ind.iter().cloned());
    out.extend(data[ax + 1..].iter().cloned());
    if data.len() == 1 {
        if let (Some(v), Some(ix)) = (cx.value(0).cloned(), cx.value(1).cloned()) {
            let n = v.values.len() as i64;
            let vals: Option<Vec<Expr>> = ix
                .values
                .iter()
                .map(|e| {
                    let i = e.as_int()?;
                    let i = if i < 0 { i + n } else { i };
                    (0..n).contains(&i).then(|| v.values[i as usize].clone())
                })
                .collect();
            if let Some(values) = vals {
                cx.set_value(
                    0,
                    SymValue {
                        shape: ix.shape.clone(),
                        values,
                    },
                );
            }
        }
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let it = tensor_in(ins, 1)?;
        let idx = it.to_i64_vec()?;
        let ax = crate::ops::kernels::norm_axis(axis, x.rank())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn gather_negative_and_out_of_range() {
        let data = Some(i64s(&[3, 2], (0..6).collect()));
        let y = run(kernel, 13, vec![], vec![data.clone(), v1(&[-1, 0])], 1).unwrap();
        assert_eq!(y[0], i64s(&[2, 2], vec![4, 5, 0, 1]));
        assert!(run(kernel, 13, vec![], vec![data, v1(&[3])], 1).is_err());
    }
}
