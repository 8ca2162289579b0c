//! What the training optimisers share: their variadic inputs (R, T, then
//! equal groups of tensors: X, G and the states) and the rule that gives
//! the outputs (X, then the new states) their inputs' types and shapes.

use crate::bail;
use crate::ops::kernel::{tensor_in, KernelError};
use crate::ops::kernels::f64_values::f64_of;
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};

/// Outputs mirror inputs 2.. (X, then the states; G, group 1, has no
/// output) for an optimiser with `groups` tensor groups.
pub(super) fn optimizer_shape(cx: &mut InferCtx, groups: usize) -> Result<(), ShapeError> {
    let rest = cx.num_inputs().saturating_sub(2);
    if !rest.is_multiple_of(groups) {
        return Err(ShapeError::new(format!(
            "expected R, T and {groups} groups of tensors"
        )));
    }
    let n = rest / groups;
    let mut k = 0;
    for g in (0..groups).filter(|&g| g != 1) {
        for i in 0..n {
            let src = 2 + g * n + i;
            if let Some(e) = cx.elem(src) {
                let s = shape_of(cx, src);
                cx.set_tensor(k, e, s);
            }
            k += 1;
        }
    }
    Ok(())
}

/// Splits the variadic inputs after R and T into `groups` equal groups.
pub(super) fn opt_groups<'v>(
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

pub(super) fn scalar_f64(t: &Tensor, what: &str) -> Result<f64, KernelError> {
    let v = f64_of(t, what)?;
    match v[..] {
        [x] => Ok(x),
        _ => bail!("{what} must be a scalar, got shape {:?}", t.shape()),
    }
}

pub(super) fn same_shape(a: &Tensor, b: &Tensor, what: &str) -> Result<(), KernelError> {
    if a.shape() != b.shape() {
        bail!("{what}: shapes {:?} and {:?} differ", a.shape(), b.shape());
    }
    Ok(())
}
