//! `NonMaxSuppression`: per batch and class, the boxes kept greedily by
//! score, dropping those overlapping a kept one beyond the IoU threshold.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n = cx.fresh();
    cx.set_tensor(0, DataType::Int64, Some(vec![Some(n), Some(Expr::int(3))]));
    Ok(())
}

fn iou(a: [f64; 4], b: [f64; 4], center: bool) -> f64 {
    // to (y1, x1, y2, x2) with y1 <= y2, x1 <= x2
    let norm = |v: [f64; 4]| -> [f64; 4] {
        if center {
            let (xc, yc, w, h) = (v[0], v[1], v[2], v[3]);
            [yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]
        } else {
            [
                v[0].min(v[2]),
                v[1].min(v[3]),
                v[0].max(v[2]),
                v[1].max(v[3]),
            ]
        }
    };
    let (a, b) = (norm(a), norm(b));
    let ih = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let iw = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = ih * iw;
    let area = |v: [f64; 4]| (v[2] - v[0]) * (v[3] - v[1]);
    let union = area(a) + area(b) - inter;
    if union <= 0.0 {
        0.0
    } else {
        inter / union
    }
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let center = info.attrs.int_or("center_point_box", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let boxes = tensor_in(ins, 0)?;
        let scores = tensor_in(ins, 1)?;
        if boxes.rank() != 3 || boxes.shape()[2] != 4 {
            bail!("boxes must be [batches, boxes, 4], got {:?}", boxes.shape());
        }
        let (nb, ns) = (boxes.shape()[0], boxes.shape()[1]);
        if scores.rank() != 3 || scores.shape()[0] != nb || scores.shape()[2] != ns {
            bail!(
                "scores must be [{nb}, classes, {ns}], got {:?}",
                scores.shape()
            );
        }
        let nc = scores.shape()[1];
        let scalar = |i: usize| -> Result<Option<f64>, KernelError> {
            match opt_tensor_in(ins, i)? {
                Some(t) if !t.is_empty() => Ok(t.to_f64_vec().and_then(|v| v.first().copied())),
                _ => Ok(None),
            }
        };
        let max_out = match opt_tensor_in(ins, 2)? {
            Some(t) if !t.is_empty() => t.to_i64_vec()?.first().copied().unwrap_or(0),
            _ => 0,
        };
        let iou_th = scalar(3)?.unwrap_or(0.0);
        let score_th = scalar(4)?;
        let bv = boxes
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("boxes must be numeric"))?;
        let sv = scores
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("scores must be numeric"))?;
        let mut out: Vec<i64> = vec![];
        if max_out > 0 {
            for b in 0..nb {
                for c in 0..nc {
                    let sc = &sv[(b * nc + c) * ns..(b * nc + c + 1) * ns];
                    let mut cand: Vec<usize> = (0..ns)
                        .filter(|&i| score_th.is_none_or(|t| sc[i] > t))
                        .collect();
                    cand.sort_by(|&i, &j| {
                        sc[j]
                            .partial_cmp(&sc[i])
                            .unwrap_or(std::cmp::Ordering::Equal)
                    });
                    let bx = |i: usize| -> [f64; 4] {
                        let o = (b * ns + i) * 4;
                        [bv[o], bv[o + 1], bv[o + 2], bv[o + 3]]
                    };
                    let mut kept: Vec<usize> = vec![];
                    for i in cand {
                        if kept.len() as i64 >= max_out {
                            break;
                        }
                        if kept.iter().all(|&k| iou(bx(k), bx(i), center) <= iou_th) {
                            kept.push(i);
                        }
                    }
                    for k in kept {
                        out.extend([b as i64, c as i64, k as i64]);
                    }
                }
            }
        }
        let n = out.len() / 3;
        Ok(vec![Value::Tensor(Tensor::from_vec(&[n, 3], out)?)])
    }))
}
