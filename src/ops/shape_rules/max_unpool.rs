//! The rule for MaxUnpool.

use super::shape_of;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};

pub fn max_unpool(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    if cx.has_input(2) {
        let s = cx
            .value(2)
            .map(|v| v.values.iter().cloned().map(Some).collect());
        let s = match s {
            Some(s) => Some(s),
            None => cx.declared_rank(2)?.map(|n| vec![None; n]),
        };
        cx.set_tensor(0, e, s);
        return Ok(());
    }
    let ks = cx.attrs.ints("kernel_shape").unwrap_or_default();
    let nsp = ks.len();
    let pads = cx.attrs.ints("pads").unwrap_or_else(|| vec![0; 2 * nsp]);
    let st = cx.attrs.ints("strides").unwrap_or_else(|| vec![1; nsp]);
    let out = shape_of(cx, 0).and_then(|x| {
        if x.len() != nsp + 2 || pads.len() != 2 * nsp || st.len() != nsp {
            return None;
        }
        let mut o = x[..2].to_vec();
        for i in 0..nsp {
            o.push(x[i + 2].as_ref().map(|d| {
                d.sub(&Expr::int(1))
                    .mul(&Expr::int(st[i]))
                    .add(&Expr::int(ks[i] - pads[i] - pads[i + nsp]))
            }));
        }
        Some(o)
    });
    cx.set_tensor(0, e, out);
    Ok(())
}
