//! `Pad`: the input padded (or cropped, with negative pads) by `pads` in
//! `constant`, `reflect`, `edge` or `wrap` mode.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::{
    axes_positions, gather_flat, gather_flat_fill, ints_in, norm_axes, opt_ints_in, out1, MAX_ELEMS,
};
use crate::ops::shape_rules::norm_axis;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Tensor;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    // pads that depend on data are fresh symbols
    let pads: Option<Vec<Expr>> = cx.shape_value_or_fresh(1);
    let axes: Option<Vec<usize>> = if cx.has_input(3) {
        match cx.ints(3) {
            Some(a) => Some(
                a.iter()
                    .map(|&x| norm_axis(x, r))
                    .collect::<Result<_, _>>()?,
            ),
            None => {
                let dims = (0..r).map(|_| Some(cx.fresh())).collect();
                cx.set_tensor(0, elem, Some(dims));
                return Ok(());
            }
        }
    } else {
        None
    };
    let axes = axes.unwrap_or_else(|| (0..r).collect());
    let Some(pads) = pads else {
        let dims = (0..r).map(|_| Some(cx.fresh())).collect();
        cx.set_tensor(0, elem, Some(dims));
        return Ok(());
    };
    if pads.len() != 2 * axes.len() {
        return Err(ShapeError::new(format!(
            "{} pads for {} axes",
            pads.len(),
            axes.len()
        )));
    }
    let mut out = shape.clone();
    for (k, &a) in axes.iter().enumerate() {
        out[a] = shape[a]
            .as_ref()
            .map(|d| d.add(&pads[k]).add(&pads[k + axes.len()]));
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let mode = info.attrs.string_or("mode", "constant");
    if !["constant", "reflect", "edge", "wrap"].contains(&mode.as_str()) {
        bail!("unknown Pad mode '{mode}'");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let r = x.rank();
        let pads = ints_in(ins, 1)?;
        let fill = match crate::ops::kernel::opt_tensor_in(ins, 2)? {
            Some(v) if !v.is_empty() => v.reshape(&[]).or_else(|_| gather_flat(v, &[0], &[]))?,
            _ => Tensor::zeros(x.dtype(), &[])?,
        };
        let axes = match opt_ints_in(ins, 3)? {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_kernel::*;
    use crate::tensor::Tensor;

    fn v1(v: &[i64]) -> Option<Tensor> {
        Some(i64s(&[v.len()], v.to_vec()))
    }

    #[test]
    fn pad_modes() {
        let x = v1(&[1, 2, 3]);
        let pads = v1(&[2, 2]);
        let mode = |m: &str| {
            run(
                kernel,
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
            kernel,
            18,
            vec![],
            vec![x, v1(&[-1, 1]), Some(Tensor::scalar(9i64))],
            1,
        )
        .unwrap();
        assert_eq!(crop[0], i64s(&[3], vec![2, 3, 9]));
    }
}
