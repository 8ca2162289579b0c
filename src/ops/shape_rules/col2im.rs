//! The rule for Col2Im.

use super::shape_of;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};

pub fn col2im(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let x = shape_of(cx, 0);
    let img = cx.value(1).map(|v| v.values.clone());
    let blk = cx.ints(2);
    let out = match (x, img) {
        (Some(x), Some(img)) if x.len() == 3 => {
            let c = match (&x[1], blk) {
                (Some(d), Some(b)) => Some(d.floor_div(&Expr::int(b.iter().product()))),
                _ => None,
            };
            let mut o = vec![x[0].clone(), c];
            o.extend(img.into_iter().map(Some));
            Some(o)
        }
        _ => None,
    };
    cx.set_tensor(0, e, out);
    Ok(())
}
