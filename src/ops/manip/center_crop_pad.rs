//! `CenterCropPad`: each axis of `axes` centre-cropped or zero-padded to
//! the given shape.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{dim_of, numel, one};
use crate::ops::kernels::manip::{for_each_index, ints_in, strides};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Tensor;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let Some(mut s) = shape_of(cx, 0) else {
        cx.set_tensor(0, e, None);
        return Ok(());
    };
    let r = s.len();
    let axes: Vec<usize> = match cx.attrs.ints("axes") {
        Some(a) => a
            .iter()
            .map(|&v| crate::ops::shape_rules::norm_axis(v, r))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    match cx.value(1).map(|v| v.values.clone()) {
        Some(vals) if vals.len() == axes.len() => {
            for (&a, v) in axes.iter().zip(vals) {
                s[a] = Some(v);
            }
        }
        Some(vals) => {
            return Err(ShapeError::new(format!(
                "shape has {} values for {} axes",
                vals.len(),
                axes.len()
            )))
        }
        None => {
            for &a in &axes {
                s[a] = None;
            }
        }
    }
    cx.set_tensor(0, e, Some(s));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axes = info.attrs.ints("axes");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let target = ints_in(ins, 1)?;
        let r = x.rank();
        let axes: Vec<usize> = match &axes {
            Some(a) => a
                .iter()
                .map(|&v| crate::ops::kernels::norm_axis(v, r))
                .collect::<Result<_, _>>()?,
            None => (0..r).collect(),
        };
        if axes.len() != target.len() {
            bail!("shape has {} values for {} axes", target.len(), axes.len());
        }
        let mut out_shape = x.shape().to_vec();
        for (&a, &t) in axes.iter().zip(&target) {
            out_shape[a] = dim_of(t, "shape")?;
        }
        numel(&out_shape)?;
        // For each axis: source offset (crop) and destination offset (pad).
        let ish = x.shape().to_vec();
        let mut src_off = vec![0usize; r];
        let mut dst_off = vec![0usize; r];
        let mut span = ish.clone();
        for a in 0..r {
            let (i, o) = (ish[a], out_shape[a]);
            if o < i {
                src_off[a] = (i - o) / 2;
                span[a] = o;
            } else {
                dst_off[a] = (o - i) / 2;
                span[a] = i;
            }
        }
        let ist = strides(&ish);
        let ost = strides(&out_shape);
        let mut pairs = Vec::new();
        for_each_index(&span, |idx| {
            let mut s = 0;
            let mut d = 0;
            for a in 0..r {
                s += (idx[a] + src_off[a]) * ist[a];
                d += (idx[a] + dst_off[a]) * ost[a];
            }
            pairs.push((s, d));
        });
        let mut out = Tensor::zeros(x.dtype(), &out_shape)?;
        let src = x.to_standard();
        macro_rules! copy {
            ($($v:ident),*) => {
                match (&src, &mut out) {
                    $((Tensor::$v(s), Tensor::$v(o)) => {
                        let (Some(s), Some(o)) = (s.as_slice(), o.as_slice_mut()) else {
                            bail!("internal layout error");
                        };
                        for &(a, b) in &pairs {
                            o[b] = s[a].clone();
                        }
                    })*
                    (Tensor::Small { data: s, .. }, Tensor::Small { data: o, .. }) => {
                        let (Some(s), Some(o)) = (s.as_slice(), o.as_slice_mut()) else {
                            bail!("internal layout error");
                        };
                        for &(a, b) in &pairs {
                            o[b] = s[a];
                        }
                    }
                    _ => bail!("internal type mismatch"),
                }
            };
        }
        copy!(F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str);
        one(out)
    }))
}
