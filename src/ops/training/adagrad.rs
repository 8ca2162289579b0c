//! `Adagrad`: X ← X − r/(1 + T·decay) · G′/(√H′ + ε), with G′ = G + norm·X
//! and H′ = H + G′² (X, then the new H, per tensor group).

use super::optimizer_inputs::{opt_groups, optimizer_shape, same_shape, scalar_f64};
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::Value;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    optimizer_shape(cx, 3)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let decay = info.attrs.float_or("decay_factor", 0.0) as f64;
    let eps = info.attrs.float_or("epsilon", 1e-6) as f64;
    let normc = info.attrs.float_or("norm_coefficient", 0.0) as f64;
    Ok(Box::new(move |_, ins| {
        let r = scalar_f64(tensor_in(ins, 0)?, "R")?;
        let t = scalar_f64(tensor_in(ins, 1)?, "T")?;
        let g = opt_groups(ins, 3)?;
        let lr = r / (1.0 + t * decay);
        let mut xs = Vec::new();
        let mut hs = Vec::new();
        for ((&x, &gr), &h) in g[0].iter().zip(&g[1]).zip(&g[2]) {
            same_shape(x, gr, "X and G")?;
            same_shape(x, h, "X and H")?;
            let (xv, gv, hv) = (f64_of(x, "X")?, f64_of(gr, "G")?, f64_of(h, "H")?);
            let mut nx = Vec::with_capacity(xv.len());
            let mut nh = Vec::with_capacity(xv.len());
            for k in 0..xv.len() {
                let greg = normc * xv[k] + gv[k];
                let h2 = hv[k] + greg * greg;
                nh.push(h2);
                nx.push(xv[k] - lr * greg / (h2.sqrt() + eps));
            }
            xs.push(Value::Tensor(float_like(x, x.shape(), nx)?));
            hs.push(Value::Tensor(float_like(h, h.shape(), nh)?));
        }
        xs.extend(hs);
        Ok(xs)
    }))
}
