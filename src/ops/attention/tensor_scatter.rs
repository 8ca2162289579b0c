//! `TensorScatter`: updates written into a cache along one axis at per-batch
//! positions, linear or circular.

use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::norm_axis;
use crate::ops::{InferCtx, ShapeError};
use crate::shape_bail;
use crate::tensor::Tensor;
use ndarray::{ArrayD, IxDyn};

/// TensorScatter: same type and shape as past_cache.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    if let Some(r) = cx.rank(0) {
        let a = crate::ops::shape_rules::norm_axis(cx.attrs.int_or("axis", -2), r)?;
        if a == 0 {
            shape_bail!("TensorScatter: axis cannot be the batch axis");
        }
    }
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, shape);
    Ok(())
}

/// Writes `upd` into a copy of `past`: `dest[i]` takes `upd[src]` for every
/// pair in `moves`.
fn scatter_copy<T: Clone>(
    past: &ArrayD<T>,
    upd: &ArrayD<T>,
    moves: &[(usize, usize)],
) -> Result<ArrayD<T>, KernelError> {
    let mut out: Vec<T> = past.iter().cloned().collect();
    let u: Vec<T> = upd.iter().cloned().collect();
    for &(d, s) in moves {
        match (out.get_mut(d), u.get(s)) {
            (Some(o), Some(x)) => *o = x.clone(),
            _ => bail!("TensorScatter: index out of range"),
        }
    }
    Ok(ArrayD::from_shape_vec(IxDyn(past.shape()), out)?)
}

/// (destination, source) flat index pairs of a TensorScatter: the cache has
/// shape `ps`, the update has `sl` entries along axis `a`.
fn scatter_moves(
    ps: &[usize],
    sl: usize,
    a: usize,
    wi: &[i64],
    circular: bool,
) -> Result<Vec<(usize, usize)>, KernelError> {
    let m = ps[a];
    let b = ps[0];
    let inner: usize = ps[a + 1..].iter().product();
    let outer: usize = ps[..a].iter().product();
    let per_batch = outer.checked_div(b).unwrap_or(1).max(1);
    let mut moves = Vec::new();
    for o in 0..outer {
        let bi = o / per_batch;
        for s in 0..sl {
            let w0 = *wi
                .get(bi)
                .ok_or_else(|| KernelError::new("TensorScatter: missing write index"))?;
            let w = w0.saturating_add(s as i64);
            let w = if circular {
                if m == 0 {
                    bail!("TensorScatter: circular write into an empty cache");
                }
                w.rem_euclid(m as i64) as usize
            } else {
                match usize::try_from(w) {
                    Ok(x) if x < m => x,
                    _ => bail!("TensorScatter: write index {w} out of range [0, {m})"),
                }
            };
            for e in 0..inner {
                moves.push(((o * m + w) * inner + e, (o * sl + s) * inner + e));
            }
        }
    }
    Ok(moves)
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", -2);
    let mode = info.attrs.string_or("mode", "linear");
    let circular = match mode.as_str() {
        "linear" => false,
        "circular" => true,
        m => bail!("TensorScatter: unknown mode '{m}'"),
    };
    Ok(Box::new(move |_, ins| {
        let past = tensor_in(ins, 0)?;
        let upd = tensor_in(ins, 1)?;
        if past.dtype() != upd.dtype() {
            bail!(
                "TensorScatter: past_cache is {} but update is {}",
                past.dtype(),
                upd.dtype()
            );
        }
        let ps = past.shape();
        let us = upd.shape();
        let r = ps.len();
        if r < 2 || us.len() != r {
            bail!(
                "TensorScatter: past_cache {ps:?} and update {us:?} must have the same rank >= 2"
            );
        }
        let a = norm_axis(axis, r)?;
        if a == 0 {
            bail!("TensorScatter: axis cannot be the batch axis");
        }
        for i in 0..r {
            if i != a && ps[i] != us[i] {
                bail!(
                    "TensorScatter: update {us:?} differs from past_cache {ps:?} outside the axis"
                );
            }
        }
        let (m, sl) = (ps[a], us[a]);
        if sl > m {
            bail!("TensorScatter: update sequence length {sl} exceeds the cache length {m}");
        }
        let b = ps[0];
        let wi = match opt_tensor_in(ins, 2)? {
            Some(t) => {
                let v = t.to_i64_vec()?;
                if v.len() != b {
                    bail!(
                        "TensorScatter: write_indices must have {b} elements, got {}",
                        v.len()
                    );
                }
                v
            }
            None => vec![0; b],
        };
        let moves = scatter_moves(ps, sl, a, &wi, circular)?;
        macro_rules! pair {
            ($($v:ident),*) => {
                match (past, upd) {
                    $((Tensor::$v(p), Tensor::$v(u)) => Tensor::$v(scatter_copy(p, u, &moves)?),)*
                    (Tensor::Small { dtype, data: p }, Tensor::Small { data: u, .. }) => Tensor::Small {
                        dtype: *dtype,
                        data: scatter_copy(p, u, &moves)?,
                    },
                    _ => bail!("TensorScatter: mismatched types"),
                }
            };
        }
        let out = pair!(F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str);
        Ok(vec![out.into()])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_moves_linear_and_circular() {
        // cache (2, 4, 1), update length 2 along axis 1
        let lin = scatter_moves(&[2, 4, 1], 2, 1, &[1, 2], false).unwrap();
        assert_eq!(lin, vec![(1, 0), (2, 1), (6, 2), (7, 3)]);
        assert!(scatter_moves(&[2, 4, 1], 2, 1, &[1, 3], false).is_err());
        let circ = scatter_moves(&[2, 4, 1], 2, 1, &[1, 3], true).unwrap();
        assert_eq!(circ, vec![(1, 0), (2, 1), (7, 2), (4, 3)]);
    }
}
