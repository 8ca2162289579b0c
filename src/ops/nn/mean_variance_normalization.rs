//! MeanVarianceNormalization: standardised over `axes` (default 0, 2, 3).

use super::float_input::float_in;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{from_f64s, to_f64s};
use crate::ops::kernels::norm_axis;
use ndarray::{ArrayD, IxDyn};

pub use crate::ops::shape_rules::same_as_input as shape;

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axes = info.attrs.ints("axes").unwrap_or_else(|| vec![0, 2, 3]);
    Ok(Box::new(move |_, ins| {
        let x = float_in(ins, 0, "MeanVarianceNormalization")?;
        let sh = x.shape().to_vec();
        let mut red = vec![false; sh.len()];
        for &a in &axes {
            red[norm_axis(a, sh.len())?] = true;
        }
        let v = to_f64s(x, "X")?;
        let arr = ArrayD::from_shape_vec(IxDyn(&sh), v)?;
        // mean and mean of squares over the reduced axes, kept as size-1 axes
        let mut mean = arr.clone();
        let mut sq = arr.mapv(|t| t * t);
        for (ax, &r) in red.iter().enumerate() {
            if r {
                let len = sh[ax].max(1) as f64;
                mean = mean
                    .sum_axis(ndarray::Axis(ax))
                    .insert_axis(ndarray::Axis(ax))
                    / len;
                sq = sq
                    .sum_axis(ndarray::Axis(ax))
                    .insert_axis(ndarray::Axis(ax))
                    / len;
            }
        }
        let m = mean
            .broadcast(IxDyn(&sh))
            .ok_or_else(|| KernelError::new("broadcast failed"))?;
        let s = sq
            .broadcast(IxDyn(&sh))
            .ok_or_else(|| KernelError::new("broadcast failed"))?;
        let out: Vec<f64> = ndarray::Zip::from(&arr)
            .and(&m)
            .and(&s)
            .map_collect(|&xv, &mv, &sv| (xv - mv) / ((sv - mv * mv).max(0.0).sqrt() + 1e-9))
            .iter()
            .cloned()
            .collect();
        Ok(vec![from_f64s(x.dtype(), &sh, out)?.into()])
    }))
}
