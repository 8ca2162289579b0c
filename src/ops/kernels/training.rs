//! The preview training optimisers (ai.onnx.preview.training): Adagrad,
//! Momentum, Adam.

use super::f64_values::{f64_of, float_like};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{Tensor, Value};

/// Splits the variadic inputs after R and T into `groups` equal groups.
fn opt_groups<'v>(
    ins: &[Option<&'v Value>],
    groups: usize,
) -> Result<Vec<Vec<&'v Tensor>>, KernelError> {
    let rest = ins.len().saturating_sub(2);
    if rest == 0 || !rest.is_multiple_of(groups) {
        bail!(
            "expected R, T and {groups} groups of tensors, got {} inputs",
            ins.len()
        );
    }
    let n = rest / groups;
    (0..groups)
        .map(|g| (0..n).map(|i| tensor_in(ins, 2 + g * n + i)).collect())
        .collect()
}

fn scalar_f64(t: &Tensor, what: &str) -> Result<f64, KernelError> {
    let v = f64_of(t, what)?;
    match v[..] {
        [x] => Ok(x),
        _ => bail!("{what} must be a scalar, got shape {:?}", t.shape()),
    }
}

fn same_shape(a: &Tensor, b: &Tensor, what: &str) -> Result<(), KernelError> {
    if a.shape() != b.shape() {
        bail!("{what}: shapes {:?} and {:?} differ", a.shape(), b.shape());
    }
    Ok(())
}

pub fn adagrad(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

pub fn momentum(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

pub fn adam(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
