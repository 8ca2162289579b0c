//! `If`: runs the branch the condition picks.

use super::body_values::{bool_scalar, merge_fresh};
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};

/// If: a known condition takes its branch (types and values); otherwise
/// the two branches merge, sizes they disagree on becoming fresh symbols.
pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let cond = cx.ints(0).filter(|v| v.len() == 1).map(|v| v[0] != 0);
    if let Some(c) = cond {
        let outs =
            cx.infer_subgraph_values(if c { "then_branch" } else { "else_branch" }, vec![])?;
        for (i, o) in outs.into_iter().enumerate().take(cx.num_outputs()) {
            if let Some((t, v)) = o {
                cx.set(i, t);
                if let Some(v) = v {
                    cx.set_value(i, v);
                }
            }
        }
        return Ok(());
    }
    let a = cx.infer_subgraph_values("then_branch", vec![])?;
    let b = cx.infer_subgraph_values("else_branch", vec![])?;
    for i in 0..cx.num_outputs() {
        let ta = a.get(i).and_then(|t| t.as_ref());
        let tb = b.get(i).and_then(|t| t.as_ref());
        let t = match (ta, tb) {
            (Some((x, _)), Some((y, _))) => Some(merge_fresh(cx, x, y)),
            (Some((x, _)), None) | (None, Some((x, _))) => Some(x.clone()),
            (None, None) => None,
        };
        if let Some(t) = t {
            cx.set(i, t);
        }
        // both branches give the same known value
        if let (Some((_, Some(va))), Some((_, Some(vb)))) = (ta, tb) {
            if va == vb {
                let v = va.clone();
                cx.set_value(i, v);
            }
        }
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let then_b = info.subgraph("then_branch")?;
    let else_b = info.subgraph("else_branch")?;
    let n_out = info.node.output.len();
    Ok(Box::new(move |cx, ins| {
        let c = bool_scalar(tensor_in(ins, 0)?, "cond")?;
        let plan = if c { &then_b } else { &else_b };
        let outs = cx.run_subgraph(plan, vec![])?;
        if outs.len() < n_out {
            bail!(
                "the {} branch produced {} outputs, If has {n_out}",
                if c { "then" } else { "else" },
                outs.len()
            );
        }
        Ok(outs)
    }))
}
