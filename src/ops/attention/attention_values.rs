//! What the transformer operators share: float inputs read in f64, the
//! row softmax, the heads layout ([`Heads`]), the narrow-float steps of
//! Attention on float16 / bfloat16 ([`Narrow`]), and the dimension
//! arithmetic of their shape rules.
//!
//! Every float kernel computes in f64 and rounds once to the output type,
//! so float16 / bfloat16 results are as close as the element type allows;
//! except Attention on float16 / bfloat16, whose function body computes in
//! the input type (scale, Q·Kᵀ, bias, softmax and P·V each rounded to T,
//! with f32 arithmetic inside each step).

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, KernelError};
use crate::ops::kernels::f64_values::to_f64s;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::Dim;

/// Input `i` as a float tensor with its values as f64.
pub(super) fn float_vals<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
    op: &str,
) -> Result<(&'v Tensor, Vec<f64>), KernelError> {
    let t = tensor_in(ins, i)?;
    if !t.dtype().is_standard_float() {
        bail!("{op}: input {i} must be a float tensor, got {}", t.dtype());
    }
    Ok((t, to_f64s(t, op)?))
}

/// The element count of an f64 buffer about to be allocated, checked
/// against the memory budget.
pub(super) fn numel(dims: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(dims, 8)?)
}

pub(super) fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Numerically stable softmax in place over a row; a row with no finite
/// maximum (every entry `-inf`, or NaN) becomes all zeros.
pub(super) fn softmax_row(row: &mut [f64]) {
    let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        row.iter_mut().for_each(|x| *x = 0.0);
        return;
    }
    let mut sum = 0.0;
    for x in row.iter_mut() {
        *x = (*x - m).exp();
        sum += *x;
    }
    if sum > 0.0 {
        row.iter_mut().for_each(|x| *x /= sum);
    }
}

/// Step-wise rounding for Attention on float16 / bfloat16, following the
/// operator's function body: each elementwise step is computed in f32 and
/// rounded to T; matrix products accumulate in f32 and round once; the
/// softmax denominator accumulates in f32 for float16 and in T for
/// bfloat16 (an add of two T values rounds to T).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Narrow {
    F16,
    Bf16,
}

impl Narrow {
    pub(super) fn of(d: DataType) -> Option<Narrow> {
        match d {
            DataType::Float16 => Some(Narrow::F16),
            DataType::Bfloat16 => Some(Narrow::Bf16),
            _ => None,
        }
    }

    /// Round an f32 result to T.
    pub(super) fn r(self, x: f32) -> f32 {
        match self {
            Narrow::F16 => half::f16::from_f32(x).to_f32(),
            Narrow::Bf16 => half::bf16::from_f32(x).to_f32(),
        }
    }

    /// Round an f64 constant straight to T.
    pub(super) fn r64(self, x: f64) -> f32 {
        match self {
            Narrow::F16 => half::f16::from_f64(x).to_f32(),
            Narrow::Bf16 => half::bf16::from_f64(x).to_f32(),
        }
    }

    /// Softmax over a row of T values, each step rounded to T; a row with
    /// no finite maximum becomes all zeros.
    pub(super) fn softmax_row(self, row: &mut [f64]) {
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            row.iter_mut().for_each(|x| *x = 0.0);
            return;
        }
        let m = m as f32;
        let mut acc = 0.0f32;
        for x in row.iter_mut() {
            let e = self.r(self.r(*x as f32 - m).exp());
            acc = match self {
                Narrow::F16 => acc + e,
                Narrow::Bf16 => self.r(acc + e),
            };
            *x = e as f64;
        }
        let mut sum = self.r(acc);
        if sum == 0.0 {
            sum = 1.0;
        }
        row.iter_mut()
            .for_each(|x| *x = self.r(*x as f32 / sum) as f64);
    }
}

/// A (B, H, S, D) tensor as flat f64 values.
#[derive(Clone, Debug)]
pub(super) struct Heads {
    pub(super) b: usize,
    pub(super) h: usize,
    pub(super) s: usize,
    pub(super) d: usize,
    pub(super) v: Vec<f64>,
}

impl Heads {
    pub(super) fn at(&self, b: usize, h: usize, s: usize) -> &[f64] {
        let o = ((b * self.h + h) * self.s + s) * self.d;
        &self.v[o..o + self.d]
    }

    /// From a 4-D tensor, or a 3-D (B, S, H*D) tensor with `heads` heads.
    pub(super) fn from_tensor(
        v: Vec<f64>,
        shape: &[usize],
        heads: Option<usize>,
        what: &str,
    ) -> Result<Heads, KernelError> {
        match shape.len() {
            4 => Ok(Heads {
                b: shape[0],
                h: shape[1],
                s: shape[2],
                d: shape[3],
                v,
            }),
            3 => {
                let h = match heads {
                    Some(h) if h > 0 => h,
                    _ => bail!("{what} is 3-D: the number of heads must be a positive attribute"),
                };
                let (b, s, hid) = (shape[0], shape[1], shape[2]);
                if hid % h != 0 {
                    bail!("{what}: hidden size {hid} is not a multiple of {h} heads");
                }
                let d = hid / h;
                let mut out = vec![0.0; v.len()];
                for bi in 0..b {
                    for si in 0..s {
                        for hi in 0..h {
                            let src = ((bi * s + si) * h + hi) * d;
                            let dst = ((bi * h + hi) * s + si) * d;
                            out[dst..dst + d].copy_from_slice(&v[src..src + d]);
                        }
                    }
                }
                Ok(Heads { b, h, s, d, v: out })
            }
            r => bail!("{what} must be 3-D or 4-D, got rank {r}"),
        }
    }

    /// Back to (B, S, H*D) order.
    pub(super) fn to_packed(&self) -> Vec<f64> {
        let (b, h, s, d) = (self.b, self.h, self.s, self.d);
        let mut out = vec![0.0; self.v.len()];
        for bi in 0..b {
            for hi in 0..h {
                for si in 0..s {
                    let src = ((bi * h + hi) * s + si) * d;
                    let dst = ((bi * s + si) * h + hi) * d;
                    out[dst..dst + d].copy_from_slice(&self.v[src..src + d]);
                }
            }
        }
        out
    }

    /// Concatenation along the sequence axis.
    pub(super) fn concat_seq(&self, next: &Heads, what: &str) -> Result<Heads, KernelError> {
        if self.b != next.b || self.h != next.h || self.d != next.d {
            bail!(
                "{what}: past shape ({}, {}, {}, {}) does not match the new ({}, {}, {}, {})",
                self.b,
                self.h,
                self.s,
                self.d,
                next.b,
                next.h,
                next.s,
                next.d
            );
        }
        let s = self.s + next.s;
        let mut v = Vec::with_capacity(self.b * self.h * s * self.d);
        for bi in 0..self.b {
            for hi in 0..self.h {
                for si in 0..self.s {
                    v.extend_from_slice(self.at(bi, hi, si));
                }
                for si in 0..next.s {
                    v.extend_from_slice(next.at(bi, hi, si));
                }
            }
        }
        Ok(Heads {
            b: self.b,
            h: self.h,
            s,
            d: self.d,
            v,
        })
    }

    pub(super) fn shape(&self) -> Vec<usize> {
        vec![self.b, self.h, self.s, self.d]
    }
}

pub(super) fn dim(cx: &InferCtx, i: usize, d: usize) -> Dim {
    cx.shape(i).and_then(|s| s.get(d).cloned()).flatten()
}

pub(super) fn mul(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.mul(b.as_ref()?))
}

pub(super) fn div(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.floor_div(b.as_ref()?))
}

pub(super) fn add(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.add(b.as_ref()?))
}

pub(super) fn attr_dim(cx: &InferCtx, name: &str) -> Dim {
    cx.attrs.int(name).map(Expr::int)
}

pub(super) fn check_float(cx: &InferCtx, i: usize, op: &str) -> Result<DataType, ShapeError> {
    let e = cx.elem_req(i)?;
    if !matches!(
        e,
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    ) {
        shape_bail!("{op}: input {i} must be a float tensor, got {e}");
    }
    Ok(e)
}

/// Output 0 has input 0's float type and shape.
pub(super) fn same_float(cx: &mut InferCtx, op: &str) -> Result<(), ShapeError> {
    let e = check_float(cx, 0, op)?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, shape);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_row_fully_masked_is_zero() {
        let mut r = vec![f64::NEG_INFINITY; 3];
        softmax_row(&mut r);
        assert_eq!(r, vec![0.0; 3]);
        let mut r = vec![0.0, f64::NEG_INFINITY, 0.0];
        softmax_row(&mut r);
        assert_eq!(r, vec![0.5, 0.0, 0.5]);
    }

    #[test]
    fn heads_pack_roundtrip() {
        let v: Vec<f64> = (0..24).map(|x| x as f64).collect();
        let h = Heads::from_tensor(v.clone(), &[2, 3, 4], Some(2), "x").unwrap();
        assert_eq!((h.b, h.h, h.s, h.d), (2, 2, 3, 2));
        // (b=0, s=1, head 1) starts at packed offset 1*4 + 2 = 6.
        assert_eq!(h.at(0, 1, 1), &[6.0, 7.0]);
        assert_eq!(h.to_packed(), v);
    }
}
