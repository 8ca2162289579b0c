//! Det: the determinant of square matrices.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::{f64_of, float_like, one, require_float};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};

/// Determinant of an n×n row-major matrix by LU with partial pivoting.
pub fn det(m: &mut [f64], n: usize) -> f64 {
    let mut d = 1.0;
    for c in 0..n {
        let mut p = c;
        for r in c + 1..n {
            if m[r * n + c].abs() > m[p * n + c].abs() {
                p = r;
            }
        }
        if m[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for k in 0..n {
                m.swap(p * n + k, c * n + k);
            }
            d = -d;
        }
        let piv = m[c * n + c];
        d *= piv;
        for r in c + 1..n {
            let f = m[r * n + c] / piv;
            if f != 0.0 {
                for k in c..n {
                    m[r * n + k] -= f * m[c * n + k];
                }
            }
        }
    }
    d
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let s = shape_of(cx, 0);
    if let Some(s) = &s {
        if s.len() < 2 {
            return Err(ShapeError::new(format!(
                "Det needs rank >= 2, got {}",
                s.len()
            )));
        }
    }
    cx.set_tensor(0, e, s.map(|s| s[..s.len() - 2].to_vec()));
    Ok(())
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        require_float(x, "X")?;
        let sh = x.shape();
        let r = sh.len();
        if r < 2 || sh[r - 1] != sh[r - 2] {
            bail!("Det needs (..., M, M) input, got {sh:?}");
        }
        let n = sh[r - 1];
        let v = f64_of(x, "X")?;
        let out: Vec<f64> = if n == 0 {
            vec![1.0; sh[..r - 2].iter().product()]
        } else {
            v.chunks(n * n).map(|c| det(&mut c.to_vec(), n)).collect()
        };
        one(float_like(x, &sh[..r - 2], out)?)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn det_of_known_matrices() {
        let mut m = vec![1.0, 2.0, 3.0, 4.0];
        assert!((det(&mut m, 2) + 2.0).abs() < 1e-12);
        let mut m = vec![0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0];
        assert!((det(&mut m, 3) + 3.0).abs() < 1e-12);
        let mut m = vec![1.0, 2.0, 2.0, 4.0];
        assert_eq!(det(&mut m, 2), 0.0);
    }
}
