//! `SVMRegressor`: `Σ coefficients[j]·K(x, sv_j) + rho` over the support
//! vectors (or `K(x, coefficients) + rho` without them, the linear form);
//! `one_class` turns the value into ±1; then `post_transform`. `Y` is
//! float `[N, 1]`.

use super::features::{row_count, rows};
use super::post_transform::PostTransform;
use super::svm_kernel::SvmKernel;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

struct SvmRegressorAttrs {
    coefficients: Vec<f32>,
    support_vectors: Vec<f32>,
    n_supports: usize,
    rho: f32,
    kernel: SvmKernel,
    one_class: bool,
    post: PostTransform,
}

fn floats(a: &Attrs, name: &str) -> Result<Vec<f32>, KernelError> {
    Ok(a.floats_checked(name)?.unwrap_or_default())
}

impl SvmRegressorAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let coefficients = floats(a, "coefficients")?;
        let support_vectors = floats(a, "support_vectors")?;
        let n = a.int_checked("n_supports")?.unwrap_or(0);
        if n < 0 || (n > 0 && coefficients.len() != n as usize) {
            bail!(
                "attribute 'n_supports' is {n} but 'coefficients' has {} values",
                coefficients.len()
            );
        }
        let n_supports = n as usize;
        if n_supports > 0 && !support_vectors.len().is_multiple_of(n_supports) {
            bail!(
                "attribute 'support_vectors' has {} values, not a multiple of n_supports ({n_supports})",
                support_vectors.len()
            );
        }
        let rho = floats(a, "rho")?;
        // the linear form is a plain dot product whatever kernel_type says,
        // as in onnxruntime
        let kernel = if n_supports > 0 {
            SvmKernel::decode(a)?
        } else {
            SvmKernel::Linear
        };
        Ok(SvmRegressorAttrs {
            coefficients,
            support_vectors,
            n_supports,
            rho: rho.first().copied().unwrap_or(0.0),
            kernel,
            one_class: a.int_checked("one_class")?.unwrap_or(0) != 0,
            post: PostTransform::decode(a)?,
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    SvmRegressorAttrs::decode(&cx.attrs).map_err(|e| ShapeError::new(e.to_string()))?;
    let n = row_count(cx, 0);
    cx.set_tensor(0, DataType::Float, n.map(|n| vec![n, Some(Expr::int(1))]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = SvmRegressorAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = rows(tensor_in(ins, 0)?, "X")?;
        let c = x.c;
        if a.n_supports > 0 {
            if a.support_vectors.len() != a.n_supports * c {
                bail!(
                    "attribute 'support_vectors' has {} values, expected {} vectors × {c} features",
                    a.support_vectors.len(),
                    a.n_supports
                );
            }
        } else if a.coefficients.len() != c {
            bail!(
                "attribute 'coefficients' has {} values, expected one per feature ({c}) in the linear form",
                a.coefficients.len()
            );
        }
        // in f32 as onnxruntime computes it: each kernel value, then the sum
        // of coefficient × kernel in support-vector order, then rho
        let x32: Vec<f32> = x.data.iter().map(|&v| v as f32).collect();
        let mut out = Vec::with_capacity(x.n);
        for i in 0..x.n {
            let r = &x32[i * c..(i + 1) * c];
            let mut s = if a.n_supports > 0 {
                a.coefficients.iter().enumerate().fold(0.0f32, |s, (j, w)| {
                    s + w * a.kernel.eval_f32(r, &a.support_vectors[j * c..(j + 1) * c])
                })
            } else {
                a.kernel.eval_f32(r, &a.coefficients)
            } + a.rho;
            if a.one_class {
                s = if s > 0.0 { 1.0 } else { -1.0 };
            }
            let mut one = [f64::from(s)];
            a.post.apply(&mut one);
            out.push(one[0] as f32);
        }
        Ok(vec![Value::Tensor(Tensor::from_vec(&[x.n, 1], out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{floats, int, run, string};

    #[test]
    fn rbf_support_vectors_and_one_class() {
        let attrs = vec![
            floats("coefficients", &[2.0, -1.0]),
            floats("support_vectors", &[0.0, 0.0, 1.0, 1.0]),
            int("n_supports", 2),
            floats("rho", &[0.5]),
            string("kernel_type", "RBF"),
            floats("kernel_params", &[1.0, 0.0, 3.0]),
        ];
        let x = Tensor::from_vec(&[1, 2], vec![1.0f32, 0.0]).unwrap();
        let out = run("SVMRegressor", attrs.clone(), vec![x.clone()]).unwrap();
        let want = 2.0 * (-1.0f64).exp() - (-1.0f64).exp() + 0.5;
        assert!((out[0].to_f64_vec().unwrap()[0] - want).abs() < 1e-6);
        let mut oc = attrs.clone();
        oc.push(int("one_class", 1));
        let out = run("SVMRegressor", oc, vec![x]).unwrap();
        assert_eq!(out[0], Tensor::from_vec(&[1, 1], vec![1.0f32]).unwrap());
        let bad = Tensor::from_vec(&[1, 3], vec![1.0f32, 0.0, 0.0]).unwrap();
        let err = run("SVMRegressor", attrs, vec![bad]).unwrap_err();
        assert!(err.contains("support_vectors"), "{err}");
    }
}
