//! `Loop`: runs its body while the condition holds and the trip count
//! lasts; loop-carried values, scan outputs stacked; the body steps that
//! depend only on loop-invariant values are hoisted and computed once.
//! Iterations shorter than [`SHORT_ITERATION`] run their kernels on one
//! thread: splitting a kernel of a few microseconds costs more in waking
//! the other threads than it saves (SLANet's 501 steps of ~0.3 ms each).

use super::body_values::{as_tensor, bool_scalar, empty_stack, insert_dim, merge_opt, scalar};
use super::pass_through::passes_through;
use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{opt_tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::axis_slices::{graph_output_types, stack_tensors};
use crate::ops::kernels::threads;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::ValueMap;
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::{Dim, TypeInfo};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n_carried = cx.num_inputs().saturating_sub(2);
    let mut body_in = vec![Some(scalar(DataType::Int64)), Some(scalar(DataType::Bool))];
    for i in 0..n_carried {
        body_in.push(cx.input(i + 2).cloned());
    }
    let outs = cx.infer_subgraph("body", body_in)?;
    let trip: Dim = if !cx.has_input(1) && cx.has_input(0) {
        cx.ints(0).and_then(|v| v.first().copied()).map(Expr::int)
    } else {
        None
    };
    let trip = Some(trip.unwrap_or_else(|| cx.fresh()));
    for k in 0..cx.num_outputs() {
        let body_t = outs.get(k + 1).and_then(|t| t.as_ref());
        if k < n_carried {
            if let Some(t) = merge_opt(body_t, cx.input(k + 2)).filter(|_| body_t.is_some()) {
                cx.set(k, t);
            } else if let Some(t) = cx.input(k + 2).cloned() {
                cx.set(k, t);
            }
        } else if let Some(t) = body_t {
            let t = insert_dim(t, 0, trip.clone());
            cx.set(k, t);
        }
    }
    Ok(())
}

/// An iteration (the second, after any hoisted steps ran in the first)
/// shorter than this makes the rest of the loop run its kernels on one
/// thread.
pub const SHORT_ITERATION: std::time::Duration = std::time::Duration::from_millis(1);

thread_local! {
    /// Loop body steps computed once instead of per iteration, on this thread.
    static HOISTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many Loop body steps this thread has hoisted out of their loops
/// (each counted once per Loop run): shows that hoisting took place.
#[cfg(test)]
pub fn hoisted_steps() -> u64 {
    HOISTED.with(|c| c.get())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let body = info.subgraph("body")?;
    let g = info
        .attrs
        .graph("body")
        .ok_or_else(|| KernelError::new("Loop needs the 'body' attribute"))?;
    let out_types = graph_output_types(g);
    let n_in = info.node.input.len();
    if n_in < 2 {
        bail!("Loop needs at least 2 inputs (M, cond), got {n_in}");
    }
    let n_carried = n_in - 2;
    if g.output.len() < 1 + n_carried {
        bail!(
            "the Loop body has {} outputs, it needs at least {}",
            g.output.len(),
            1 + n_carried
        );
    }
    let n_scan = g.output.len() - 1 - n_carried;
    // Carried values the body passes through unchanged (its output k is its
    // input k, or a no-op chain of it: see `pass_through`) stay fixed for
    // the whole loop: body steps reading only them, enclosing scopes and
    // constants are computed once before the first iteration.
    let invariant: Vec<usize> = (0..n_carried)
        .filter(|&k| match (g.input.get(2 + k), g.output.get(1 + k)) {
            (Some(i), Some(o)) => passes_through(g, o.name(), i.name()),
            _ => false,
        })
        .collect();
    let invariant_names: Vec<String> = invariant
        .iter()
        .filter_map(|&k| g.input.get(2 + k).map(|v| v.name().to_string()))
        .collect();
    let hoist = body.hoisting(&invariant_names);
    Ok(Box::new(move |cx, ins| {
        let m = match opt_tensor_in(ins, 0)? {
            Some(t) => {
                let v = t.to_i64_vec()?;
                if v.len() != 1 {
                    bail!("M must have one element, got shape {:?}", t.shape());
                }
                Some(v[0])
            }
            None => None,
        };
        let mut cond = match opt_tensor_in(ins, 1)? {
            Some(t) => Some(bool_scalar(t, "cond")?),
            None => None,
        };
        let mut carried: Vec<Value> = Vec::with_capacity(n_carried);
        for i in 0..n_carried {
            match ins.get(i + 2).copied().flatten() {
                Some(v) => carried.push(v.clone()),
                None => carried.push(Value::Optional(None)),
            }
        }
        let mut scans: Vec<Vec<Value>> = vec![vec![]; n_scan];
        // the hoisted steps' results, computed before the first iteration
        let mut pre: Option<ValueMap> = None;
        let mut i: i64 = 0;
        let mut sequential = false;
        loop {
            if let Some(m) = m {
                if i >= m {
                    break;
                }
            }
            if cond == Some(false) {
                break;
            }
            crate::ops::limits::check_iteration(i as u64, "Loop").map_err(KernelError::new)?;
            let mut args = Vec::with_capacity(2 + n_carried);
            args.push(Value::Tensor(Tensor::scalar(i)));
            args.push(Value::Tensor(Tensor::scalar(cond.unwrap_or(true))));
            // the body's outputs replace every carried value: move them in
            args.append(&mut carried);
            let started = std::time::Instant::now();
            let mut run_body = |args: Vec<Value>| match hoist.as_ref().filter(|_| cx.can_hoist()) {
                Some(h) => {
                    if pre.is_none() {
                        let fixed = invariant
                            .iter()
                            .zip(&invariant_names)
                            .filter_map(|(&k, n)| args.get(2 + k).map(|v| (n.clone(), v.clone())))
                            .collect();
                        pre = Some(cx.run_invariant(&body, fixed, h)?);
                        HOISTED.with(|c| c.set(c.get() + h.count() as u64));
                    }
                    let pre = pre.as_ref().expect("computed above");
                    cx.run_variant(&body, args, h, pre)
                }
                None => cx.run_subgraph(&body, args),
            };
            let outs = if sequential {
                threads::sequential(|| run_body(args))?
            } else {
                run_body(args)?
            };
            if i == 1 && started.elapsed() < SHORT_ITERATION {
                sequential = true;
            }
            if outs.len() < 1 + n_carried + n_scan {
                bail!("the Loop body produced {} outputs", outs.len());
            }
            let mut it = outs.into_iter();
            let c = it.next().expect("length checked");
            if cond.is_some() {
                let ct = as_tensor(c, "the body's condition")?;
                cond = Some(bool_scalar(&ct, "the body's condition")?);
            }
            carried.extend(it.by_ref().take(n_carried));
            for s in scans.iter_mut() {
                s.push(it.next().expect("length checked"));
            }
            i = i.wrapping_add(1);
        }
        let mut result = carried;
        for (k, s) in scans.into_iter().enumerate() {
            if s.is_empty() {
                let ty = out_types
                    .get(1 + n_carried + k)
                    .cloned()
                    .unwrap_or(TypeInfo::Unknown);
                result.push(empty_stack(&ty)?);
                continue;
            }
            let ts: Vec<Tensor> = s
                .into_iter()
                .map(|v| as_tensor(v, "a scan output"))
                .collect::<Result<_, _>>()?;
            result.push(Value::Tensor(stack_tensors(&ts, 0)?));
        }
        Ok(result)
    }))
}
