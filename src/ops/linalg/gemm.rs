//! `Gemm`: `alpha * op(A) · op(B) + beta * C`.

use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::matrix_product::{par_gemm, Gemm, Operand};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let shape = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => {
            if a.len() != 2 || b.len() != 2 {
                return Err(ShapeError::new("Gemm needs 2-D A and B"));
            }
            let ta = cx.attrs.int_or("transA", 0) != 0;
            let tb = cx.attrs.int_or("transB", 0) != 0;
            let m = if ta { &a[1] } else { &a[0] };
            let ka = if ta { &a[0] } else { &a[1] };
            let kb = if tb { &b[1] } else { &b[0] };
            let n = if tb { &b[0] } else { &b[1] };
            if let (Some(x), Some(y)) = (ka, kb) {
                if x.equals(y) == Some(false) {
                    return Err(ShapeError::new(format!(
                        "Gemm inner dimensions differ: {x} vs {y}"
                    )));
                }
            }
            Some(vec![m.clone(), n.clone()])
        }
        _ => None,
    };
    cx.set_tensor(0, elem, shape);
    Ok(())
}

/// C broadcast to the m x n output.
fn c_as<T>(c: &ArrayD<T>, m: usize, n: usize) -> Result<ndarray::ArrayView2<'_, T>, KernelError> {
    let cb = c.broadcast(ndarray::IxDyn(&[m, n])).ok_or_else(|| {
        KernelError::new(format!(
            "C of shape {:?} does not broadcast to [{m}, {n}]",
            c.shape()
        ))
    })?;
    Ok(cb.into_dimensionality::<ndarray::Ix2>()?)
}

/// f32 Gemm straight on the operands' strides (a transposed operand is not
/// copied): `alpha * op(A) · op(B) + beta * C`.
fn gemm_f32(
    x: &ArrayD<f32>,
    y: &ArrayD<f32>,
    c: Option<&ArrayD<f32>>,
    p: (bool, bool, f32, f32),
) -> Result<ArrayD<f32>, KernelError> {
    let (ta, tb, alpha, beta) = p;
    if x.ndim() != 2 || y.ndim() != 2 {
        bail!(
            "Gemm needs 2-D A and B, got {:?} and {:?}",
            x.shape(),
            y.shape()
        );
    }
    let x2 = x.view().into_dimensionality::<ndarray::Ix2>()?;
    let y2 = y.view().into_dimensionality::<ndarray::Ix2>()?;
    let x2 = if ta { x2.reversed_axes() } else { x2 };
    let y2 = if tb { y2.reversed_axes() } else { y2 };
    let (m, k) = x2.dim();
    let (k2, n) = y2.dim();
    if k != k2 {
        bail!("Gemm inner dimensions differ ({k} vs {k2})");
    }
    crate::tensor::budget::check(&[m, n], 8)?;
    if let (Some(xd), Some(yd)) = (x.as_slice(), y.as_slice()) {
        if !ta && tb && m <= ROWS_AS_DOTS && m > 0 {
            return few_rows(xd, yd, c, (m, k, n), alpha, beta);
        }
    }
    let mut out = ndarray::Array2::<f32>::zeros((m, n));
    let mut beta_eff = 0.0;
    if let Some(c) = c {
        out.assign(&c_as(c, m, n)?);
        beta_eff = beta;
    }
    if m > 0 && n > 0 {
        let (xs, ys) = (x2.strides(), y2.strides());
        // SAFETY: the pointers and strides describe the ndarray views x2
        // and y2 (m×k and k×n, checked above) and the owned m×n output;
        // matrixmultiply reads and writes only within those extents.
        let a = Operand {
            ptr: x2.as_ptr(),
            row: xs[0],
            col: xs[1],
        };
        let b = Operand {
            ptr: y2.as_ptr(),
            row: ys[0],
            col: ys[1],
        };
        unsafe {
            par_gemm(
                matrixmultiply::sgemm,
                (m, k, n),
                alpha,
                a,
                b,
                beta_eff,
                out.as_mut_ptr(),
            )
        }
    }
    Ok(out.into_dyn())
}

/// Rows of A up to which a Gemm with transB (B's rows are the output
/// columns' weights) runs as dot products reading B in place instead of a
/// GEMM that packs all of B for them: resnet50's 2048 -> 1000 classifier
/// of one image packed 8 MB each run.
const ROWS_AS_DOTS: usize = 4;

/// `alpha * A · Bᵀ + beta * C` for contiguous A (m x k) and B (n x k).
fn few_rows(
    a: &[f32],
    b: &[f32],
    c: Option<&ArrayD<f32>>,
    (m, k, n): (usize, usize, usize),
    alpha: f32,
    beta: f32,
) -> Result<ArrayD<f32>, KernelError> {
    let mut out = ndarray::Array2::from_shape_vec(
        (m, n),
        crate::ops::kernels::conv_single_position::row_products(a, b, None, (m, k, n)),
    )?;
    if alpha != 1.0 {
        out.mapv_inplace(|v| v * alpha);
    }
    if let Some(c) = c {
        let cb = c_as(c, m, n)?;
        // beta 0 ignores C (NaN included), as the GEMM path does
        if beta != 0.0 {
            ndarray::Zip::from(&mut out)
                .and(&cb)
                .for_each(|o, &cv| *o += beta * cv);
        }
    }
    Ok(out.into_dyn())
}

fn gemm_typed<T: Gemm>(
    a: &Tensor,
    b: &Tensor,
    c: Option<&Tensor>,
    p: (bool, bool, f32, f32),
) -> Result<Tensor, KernelError> {
    let (ta, tb, alpha, beta) = p;
    let x: &ArrayD<T> = crate::ops::kernels::typed(a, "A")?;
    let y: &ArrayD<T> = crate::ops::kernels::typed(b, "B")?;
    if x.ndim() != 2 || y.ndim() != 2 {
        bail!(
            "Gemm needs 2-D A and B, got {:?} and {:?}",
            x.shape(),
            y.shape()
        );
    }
    let x2 = x.view().into_dimensionality::<ndarray::Ix2>()?;
    let y2 = y.view().into_dimensionality::<ndarray::Ix2>()?;
    let x2 = if ta { x2.reversed_axes() } else { x2 };
    let y2 = if tb { y2.reversed_axes() } else { y2 };
    let (m, k) = x2.dim();
    let (k2, n) = y2.dim();
    if k != k2 {
        bail!("Gemm inner dimensions differ ({k} vs {k2})");
    }
    crate::tensor::budget::check(&[m, n], 8)?;
    let xs = x2.as_standard_layout();
    let ys = y2.as_standard_layout();
    let (Some(xd), Some(yd)) = (xs.as_slice(), ys.as_slice()) else {
        bail!("internal: non-contiguous buffer");
    };
    let mut out = vec![T::zero(); m * n];
    T::gemm(m, k, n, xd, yd, &mut out);
    let al = T::from_f64(alpha as f64);
    if alpha != 1.0 {
        out.iter_mut().for_each(|v| *v = v.mul(al));
    }
    let mut res = ArrayD::from_shape_vec(ndarray::IxDyn(&[m, n]), out)?;
    if let Some(c) = c {
        let cv: &ArrayD<T> = crate::ops::kernels::typed(c, "C")?;
        let cb = c_as(cv, m, n)?.into_dyn();
        let be = T::from_f64(beta as f64);
        ndarray::Zip::from(&mut res).and(&cb).for_each(|o, &cval| {
            *o = o.add(if beta == 1.0 { cval } else { cval.mul(be) });
        });
    }
    Ok(T::wrap(res))
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let p = (
        info.attrs.int_or("transA", 0) != 0,
        info.attrs.int_or("transB", 0) != 0,
        info.attrs.float_or("alpha", 1.0),
        info.attrs.float_or("beta", 1.0),
    );
    Ok(Box::new(move |_, ins| {
        let a = tensor_in(ins, 0)?;
        let b = tensor_in(ins, 1)?;
        let c = crate::ops::kernel::opt_tensor_in(ins, 2)?;
        if let (Tensor::F32(x), Tensor::F32(w)) = (a, b) {
            let cf = match c {
                Some(Tensor::F32(cv)) => Some(cv),
                Some(other) => bail!("C must be float like A, got {}", other.dtype()),
                None => None,
            };
            return Ok(vec![Value::Tensor(Tensor::F32(gemm_f32(x, w, cf, p)?))]);
        }
        let y = dispatch_num!(
            a,
            gemm_typed(a, b, c, p),
            bail!("Gemm does not accept {}", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernels::matrix_product::tests::{arr, pool};

    #[test]
    fn gemm_f32_on_two_threads_gives_the_one_thread_result() {
        // a transposed (strided) A, alpha, beta and a broadcast C
        let (a, b, c) = (arr(&[300, 150], 3), arr(&[300, 70], 4), arr(&[70], 5));
        let p = (true, false, 0.5, 2.0);
        let g1 = pool(1).install(|| gemm_f32(&a, &b, Some(&c), p).unwrap());
        let g2 = pool(2).install(|| gemm_f32(&a, &b, Some(&c), p).unwrap());
        assert_eq!(g1, g2);
        let mut want = 0f64;
        for q in 0..300 {
            want += a[[q, 149]] as f64 * b[[q, 69]] as f64;
        }
        let want = 0.5 * want + 2.0 * c[[69]] as f64;
        assert!((g1[[149, 69]] as f64 - want).abs() < 1e-3);
    }

    #[test]
    fn few_rows_by_a_transposed_b_match_the_gemm_path() {
        // 1..=4 rows take the dot products, 5 the GEMM; B's transpose as
        // a contiguous k x n matrix always takes the GEMM
        for m in 1..=5 {
            let (a, b, c) = (arr(&[m, 300], 6), arr(&[70, 300], 7), arr(&[m, 1], 8));
            let bt = b.t().as_standard_layout().into_owned().into_dyn();
            for (alpha, beta) in [(1.0, 1.0), (0.5, -2.0)] {
                let dots = gemm_f32(&a, &b, Some(&c), (false, true, alpha, beta)).unwrap();
                let gemm = gemm_f32(&a, &bt, Some(&c), (false, false, alpha, beta)).unwrap();
                assert_eq!(dots.shape(), [m, 70]);
                for (d, g) in dots.iter().zip(&gemm) {
                    assert!(
                        (d - g).abs() <= 1e-4 * g.abs().max(1.0),
                        "m {m}: {d} vs {g}"
                    );
                }
            }
        }
        // beta 0 ignores C, NaN included
        let a = arr(&[2, 16], 1);
        let c = ndarray::ArrayD::from_elem(vec![2, 3], f32::NAN);
        let y = gemm_f32(&a, &arr(&[3, 16], 2), Some(&c), (false, true, 1.0, 0.0)).unwrap();
        assert!(y.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn gemm_trans_and_bias() {
        let a = Tensor::from_vec(&[3, 2], vec![1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
        let b = Tensor::from_vec(&[3, 2], (1..=6).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
        let c = Tensor::from_vec(&[2], vec![1.0f32, -1.0]).unwrap();
        let y = gemm_typed::<f32>(&a, &b, Some(&c), (true, false, 2.0, 3.0)).unwrap();
        assert_eq!(y.to_f64_vec().unwrap(), vec![47.0, 53.0, 101.0, 125.0]);
    }
}
