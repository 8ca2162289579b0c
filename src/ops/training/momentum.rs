//! `Momentum`: V′ = α·V + β·G′ (β = 1 at T = 0), X ← X − r·V′, or the
//! Nesterov step with `mode = nesterov` (X, then the new V, per group).

use super::optimizer_inputs::{opt_groups, optimizer_shape, same_shape, scalar_f64};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    optimizer_shape(cx, 3)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info
        .attrs
        .float("alpha")
        .ok_or_else(|| KernelError::new("Momentum needs alpha"))? as f64;
    let beta = info
        .attrs
        .float("beta")
        .ok_or_else(|| KernelError::new("Momentum needs beta"))? as f64;
    let normc = info.attrs.float_or("norm_coefficient", 0.0) as f64;
    let nesterov = match info.attrs.string_or("mode", "standard").as_str() {
        "standard" => false,
        "nesterov" => true,
        other => bail!("unknown Momentum mode '{other}'"),
    };
    Ok(Box::new(move |_, ins| {
        let r = scalar_f64(tensor_in(ins, 0)?, "R")?;
        let t = scalar_f64(tensor_in(ins, 1)?, "T")?;
        let g = opt_groups(ins, 3)?;
        let b = if t > 0.0 { beta } else { 1.0 };
        let mut xs = Vec::new();
        let mut vs = Vec::new();
        for ((&x, &gr), &v) in g[0].iter().zip(&g[1]).zip(&g[2]) {
            same_shape(x, gr, "X and G")?;
            same_shape(x, v, "X and V")?;
            let (xv, gv, vv) = (f64_of(x, "X")?, f64_of(gr, "G")?, f64_of(v, "V")?);
            let mut nx = Vec::with_capacity(xv.len());
            let mut nv = Vec::with_capacity(xv.len());
            for k in 0..xv.len() {
                let greg = normc * xv[k] + gv[k];
                let v2 = alpha * vv[k] + b * greg;
                nv.push(v2);
                nx.push(if nesterov {
                    xv[k] - r * (greg + alpha * v2)
                } else {
                    xv[k] - r * v2
                });
            }
            xs.push(Value::Tensor(float_like(x, x.shape(), nx)?));
            vs.push(Value::Tensor(float_like(v, v.shape(), nv)?));
        }
        xs.extend(vs);
        Ok(xs)
    }))
}
