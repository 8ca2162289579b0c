//! `Adam`: first and second moments V′, H′ and the bias-corrected step;
//! `norm_coefficient_post` shrinks X after the step (X, V, H per group).

use super::optimizer_inputs::{opt_groups, optimizer_shape, same_shape, scalar_f64};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    optimizer_shape(cx, 4)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 0.9) as f64;
    let beta = info.attrs.float_or("beta", 0.999) as f64;
    let eps = info.attrs.float_or("epsilon", 1e-6) as f64;
    let normc = info.attrs.float_or("norm_coefficient", 0.0) as f64;
    let post = info.attrs.float_or("norm_coefficient_post", 0.0) as f64;
    Ok(Box::new(move |_, ins| {
        let r = scalar_f64(tensor_in(ins, 0)?, "R")?;
        let t = scalar_f64(tensor_in(ins, 1)?, "T")?;
        let g = opt_groups(ins, 4)?;
        let lr = if t > 0.0 {
            r * (1.0 - beta.powf(t)).sqrt() / (1.0 - alpha.powf(t))
        } else {
            r
        };
        let (mut xs, mut vs, mut hs) = (Vec::new(), Vec::new(), Vec::new());
        for (((&x, &gr), &v), &h) in g[0].iter().zip(&g[1]).zip(&g[2]).zip(&g[3]) {
            same_shape(x, gr, "X and G")?;
            same_shape(x, v, "X and V")?;
            same_shape(x, h, "X and H")?;
            let (xv, gv, vv, hv) = (
                f64_of(x, "X")?,
                f64_of(gr, "G")?,
                f64_of(v, "V")?,
                f64_of(h, "H")?,
            );
            let (mut nx, mut nv, mut nh) = (vec![], vec![], vec![]);
            for k in 0..xv.len() {
                let greg = normc * xv[k] + gv[k];
                let v2 = alpha * vv[k] + (1.0 - alpha) * greg;
                let h2 = beta * hv[k] + (1.0 - beta) * greg * greg;
                let x2 = xv[k] - lr * v2 / (h2.sqrt() + eps);
                nx.push((1.0 - post) * x2);
                nv.push(v2);
                nh.push(h2);
            }
            xs.push(Value::Tensor(float_like(x, x.shape(), nx)?));
            vs.push(Value::Tensor(float_like(v, v.shape(), nv)?));
            hs.push(Value::Tensor(float_like(h, h.shape(), nh)?));
        }
        xs.extend(vs);
        xs.extend(hs);
        Ok(xs)
    }))
}
