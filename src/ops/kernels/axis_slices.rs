//! Tensors taken apart and put together along one axis: the slices and
//! stacks the control-flow kernels (Loop, Scan) and the sequence kernels
//! share, and the declared output types of a body graph.

use super::manip::concat_tensors;
use crate::bail;
use crate::map_array;
use crate::ops::kernel::KernelError;
use crate::proto::GraphProto;
use crate::tensor::Tensor;
use crate::value_type::TypeInfo;
use ndarray::{Axis, Slice};

/// The sub-tensor at `index` along `axis`, the axis removed.
pub fn take_index(t: &Tensor, axis: usize, index: usize) -> Result<Tensor, KernelError> {
    if axis >= t.rank() || index >= t.shape()[axis] {
        bail!(
            "index {index} along axis {axis} is out of range for shape {:?}",
            t.shape()
        );
    }
    Ok(map_array!(t, a => a.index_axis(Axis(axis), index).to_owned()))
}

/// The elements `start..end` along `axis`.
pub fn take_range(
    t: &Tensor,
    axis: usize,
    start: usize,
    end: usize,
) -> Result<Tensor, KernelError> {
    if axis >= t.rank() || start > end || end > t.shape()[axis] {
        bail!(
            "range {start}..{end} along axis {axis} is out of range for shape {:?}",
            t.shape()
        );
    }
    Ok(map_array!(t, a => a
        .slice_axis(Axis(axis), Slice::from(start..end))
        .to_owned()))
}

/// Inserts an axis of size 1 at `axis`.
pub fn unsqueeze_at(t: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let mut shape = t.shape().to_vec();
    if axis > shape.len() {
        bail!("cannot insert axis {axis} into shape {shape:?}");
    }
    shape.insert(axis, 1);
    Ok(t.reshape(&shape)?)
}

/// Stacks tensors of one type and shape along a new axis.
pub fn stack_tensors(ts: &[Tensor], axis: usize) -> Result<Tensor, KernelError> {
    let Some(first) = ts.first() else {
        bail!("cannot stack zero tensors");
    };
    for (i, t) in ts.iter().enumerate() {
        if t.shape() != first.shape() {
            bail!(
                "tensor {i} has shape {:?}, tensor 0 has {:?}: cannot stack",
                t.shape(),
                first.shape()
            );
        }
    }
    // the expanded copies and the stacked result
    let mut out_shape = first.shape().to_vec();
    out_shape.insert(axis.min(out_shape.len()), ts.len());
    crate::tensor::budget::check(&out_shape, 2 * first.dtype().alloc_bytes())?;
    let ex: Vec<Tensor> = ts
        .iter()
        .map(|t| unsqueeze_at(t, axis))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&Tensor> = ex.iter().collect();
    concat_tensors(&refs, axis as i64, &ex[0])
}

/// Reverses a tensor along an axis.
pub fn reverse_axis(t: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    if axis >= t.rank() {
        bail!("axis {axis} is out of range for shape {:?}", t.shape());
    }
    Ok(map_array!(t, a => {
        let mut v = a.view();
        v.invert_axis(Axis(axis));
        v.to_owned()
    }))
}

/// The declared types of a graph's outputs.
pub fn graph_output_types(g: &GraphProto) -> Vec<TypeInfo> {
    g.output
        .iter()
        .map(|o| {
            o.r#type
                .as_ref()
                .map(TypeInfo::from_proto)
                .unwrap_or(TypeInfo::Unknown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_and_take() {
        let a = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        let b = Tensor::from_vec(&[2], vec![3.0f32, 4.0]).unwrap();
        let s = stack_tensors(&[a.clone(), b], 1).unwrap();
        assert_eq!(s.shape(), &[2, 2]);
        assert_eq!(s.to_f64_vec().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(take_index(&s, 1, 0).unwrap(), a);
        assert!(take_index(&s, 1, 2).is_err());
        let r = reverse_axis(&s, 0).unwrap();
        assert_eq!(r.to_f64_vec().unwrap(), vec![2.0, 4.0, 1.0, 3.0]);
    }
}
