//! `Scan`: runs its body once per slice of the scan inputs, along their
//! axes and directions; states carried, scan outputs stacked.

use super::body_values::{as_tensor, empty_stack, insert_dim, merge_opt, pad_to, remove_dim};
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::axis_slices::{graph_output_types, stack_tensors, take_index};
use crate::ops::kernels::norm_axis;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use crate::value_type::{Dim, TypeInfo};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n_scan_in = cx
        .attrs
        .int("num_scan_inputs")
        .ok_or_else(|| ShapeError::new("Scan needs 'num_scan_inputs'"))?
        .max(0) as usize;
    let v8 = cx.opset < 9;
    let off = usize::from(v8);
    let n_in = cx.num_inputs().saturating_sub(off);
    if n_scan_in > n_in {
        return Err(ShapeError::new(format!(
            "num_scan_inputs {n_scan_in} does not fit {n_in} inputs"
        )));
    }
    let n_state = n_in - n_scan_in;
    let in_axes = if v8 {
        vec![0; n_scan_in]
    } else {
        cx.attrs
            .ints("scan_input_axes")
            .unwrap_or_else(|| vec![0; n_scan_in])
    };
    // strip the batch axis of opset 8
    let strip = |t: Option<&TypeInfo>| -> Option<TypeInfo> {
        t.map(|t| if v8 { remove_dim(t, 0) } else { t.clone() })
    };
    let batch: Dim = if v8 {
        (off..cx.num_inputs())
            .find_map(|i| cx.shape(i).and_then(|s| s.first().cloned()))
            .flatten()
    } else {
        None
    };
    let mut body_in = Vec::with_capacity(n_in);
    for i in 0..n_state {
        body_in.push(strip(cx.input(off + i)));
    }
    let mut len: Dim = None;
    for k in 0..n_scan_in {
        let t = strip(cx.input(off + n_state + k));
        let ax = in_axes.get(k).copied().unwrap_or(0);
        match &t {
            Some(t @ TypeInfo::Tensor { shape: Some(s), .. }) => {
                let a = norm_axis(ax, s.len())?;
                if k == 0 {
                    len = s[a].clone();
                }
                body_in.push(Some(remove_dim(t, a)));
            }
            _ => body_in.push(None),
        }
    }
    let outs = cx.infer_subgraph("body", body_in.clone())?;
    let len = Some(len.unwrap_or_else(|| cx.fresh()));
    let out_axes = if v8 {
        vec![]
    } else {
        cx.attrs.ints("scan_output_axes").unwrap_or_default()
    };
    for k in 0..cx.num_outputs() {
        let body_t = outs.get(k).and_then(|t| t.as_ref());
        let t = if k < n_state {
            merge_opt(body_t, body_in.get(k).and_then(|t| t.as_ref()))
        } else {
            body_t.map(|t| {
                let r = t.shape().map_or(0, |s| s.len()) + 1;
                let ax = out_axes.get(k - n_state).copied().unwrap_or(0);
                let a = norm_axis(ax, r).unwrap_or(0);
                insert_dim(t, a, len.clone())
            })
        };
        if let Some(t) = t {
            let t = if v8 {
                insert_dim(&t, 0, batch.clone())
            } else {
                t
            };
            cx.set(k, t);
        }
    }
    Ok(())
}

/// Attributes of a Scan node.
struct ScanSpec {
    n_state: usize,
    n_scan_in: usize,
    in_axes: Vec<i64>,
    in_dirs: Vec<i64>,
    out_axes: Vec<i64>,
    out_dirs: Vec<i64>,
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let body = info.subgraph("body")?;
    let g = info
        .attrs
        .graph("body")
        .ok_or_else(|| KernelError::new("Scan needs the 'body' attribute"))?;
    let out_types = graph_output_types(g);
    let n_scan_in = info
        .attrs
        .int("num_scan_inputs")
        .ok_or_else(|| KernelError::new("Scan needs 'num_scan_inputs'"))?;
    let v8 = info.opset < 9;
    let n_in = info.node.input.len().saturating_sub(usize::from(v8));
    if n_scan_in < 1 || n_scan_in as usize > n_in {
        bail!("num_scan_inputs {n_scan_in} does not fit {n_in} inputs");
    }
    let n_scan_in = n_scan_in as usize;
    let n_state = n_in - n_scan_in;
    if g.output.len() < n_state {
        bail!("the Scan body has fewer outputs than states");
    }
    let n_scan_out = g.output.len() - n_state;
    let get = |name: &str, n: usize| -> Result<Vec<i64>, KernelError> {
        let v = info.attrs.ints(name).unwrap_or_else(|| vec![0; n]);
        if v.len() != n {
            bail!("'{name}' has {} entries, expected {n}", v.len());
        }
        Ok(v)
    };
    let spec = ScanSpec {
        n_state,
        n_scan_in,
        in_axes: if v8 {
            vec![0; n_scan_in]
        } else {
            get("scan_input_axes", n_scan_in)?
        },
        in_dirs: if v8 {
            get("directions", n_scan_in)?
        } else {
            get("scan_input_directions", n_scan_in)?
        },
        out_axes: if v8 {
            vec![0; n_scan_out]
        } else {
            get("scan_output_axes", n_scan_out)?
        },
        out_dirs: if v8 {
            vec![0; n_scan_out]
        } else {
            get("scan_output_directions", n_scan_out)?
        },
    };
    Ok(Box::new(move |cx, ins| {
        let mut run =
            |ins: &[Value], len_limit: Option<usize>| -> Result<Vec<Value>, KernelError> {
                let states: Vec<Value> = ins[..spec.n_state].to_vec();
                let mut scan_ins = Vec::with_capacity(spec.n_scan_in);
                let mut seq_len = None;
                for k in 0..spec.n_scan_in {
                    let t = match &ins[spec.n_state + k] {
                        Value::Tensor(t) => t,
                        v => bail!("scan input {k} must be a tensor, got {}", v.describe()),
                    };
                    let ax = norm_axis(spec.in_axes[k], t.rank())?;
                    let n = t.shape()[ax];
                    match seq_len {
                        None => seq_len = Some(n),
                        Some(m) if m != n => {
                            bail!("scan inputs have different lengths ({m} and {n})")
                        }
                        _ => {}
                    }
                    scan_ins.push((t, ax, spec.in_dirs[k] != 0));
                }
                let full = seq_len.unwrap_or(0);
                let len = len_limit.map_or(full, |l| l.min(full));
                let mut states = states;
                let mut outs: Vec<Vec<Tensor>> = vec![vec![]; out_types.len() - spec.n_state];
                for step in 0..len {
                    crate::ops::limits::check_iteration(step as u64, "Scan")
                        .map_err(KernelError::new)?;
                    let mut args = states.clone();
                    for &(t, ax, rev) in &scan_ins {
                        let idx = if rev { full - 1 - step } else { step };
                        args.push(Value::Tensor(take_index(t, ax, idx)?));
                    }
                    let res = cx.run_subgraph(&body, args)?;
                    if res.len() < out_types.len() {
                        bail!("the Scan body produced {} outputs", res.len());
                    }
                    let mut it = res.into_iter();
                    for s in states.iter_mut() {
                        *s = it.next().expect("length checked");
                    }
                    for o in outs.iter_mut() {
                        o.push(as_tensor(
                            it.next().expect("length checked"),
                            "a scan output",
                        )?);
                    }
                }
                let mut result = states;
                for (k, mut o) in outs.into_iter().enumerate() {
                    if o.is_empty() {
                        let ty = &out_types[spec.n_state + k];
                        result.push(empty_stack(ty)?);
                        continue;
                    }
                    if spec.out_dirs[k] != 0 {
                        o.reverse();
                    }
                    let r = o[0].rank() + 1;
                    let ax = norm_axis(spec.out_axes[k], r)?;
                    result.push(Value::Tensor(stack_tensors(&o, ax)?));
                }
                Ok(result)
            };
        if !v8 {
            let mut vals = Vec::with_capacity(ins.len());
            for (i, v) in ins.iter().enumerate() {
                match v {
                    Some(v) => vals.push((*v).clone()),
                    None => bail!("input {i} is missing"),
                }
            }
            if vals.len() < spec.n_state + spec.n_scan_in {
                bail!("Scan got {} inputs", vals.len());
            }
            return run(&vals, None);
        }
        // opset 8: input 0 is sequence_lens, axis 0 of every input is the batch.
        let lens = match opt_tensor_in(ins, 0)? {
            Some(t) => Some(t.to_i64_vec()?),
            None => None,
        };
        let mut tensors = Vec::with_capacity(ins.len());
        for i in 1..ins.len() {
            tensors.push(tensor_in(ins, i)?);
        }
        if tensors.len() < spec.n_state + spec.n_scan_in {
            bail!("Scan got {} inputs", tensors.len());
        }
        let batch = tensors
            .first()
            .and_then(|t| t.shape().first().copied())
            .unwrap_or(0);
        for (i, t) in tensors.iter().enumerate() {
            if t.shape().first() != Some(&batch) {
                bail!(
                    "input {} has shape {:?}, batch size is {batch}",
                    i + 1,
                    t.shape()
                );
            }
        }
        if let Some(l) = &lens {
            if l.len() != batch {
                bail!(
                    "sequence_lens has {} entries, batch size is {batch}",
                    l.len()
                );
            }
        }
        let mut per_out: Vec<Vec<Tensor>> = vec![];
        for b in 0..batch {
            let vals: Vec<Value> = tensors
                .iter()
                .map(|t| take_index(t, 0, b).map(Value::Tensor))
                .collect::<Result<_, _>>()?;
            let limit = match &lens {
                Some(l) => {
                    if l[b] < 0 {
                        bail!("sequence_lens[{b}] is negative");
                    }
                    Some(l[b] as usize)
                }
                None => None,
            };
            let res = run(&vals, limit)?;
            if per_out.is_empty() {
                per_out = vec![vec![]; res.len()];
            }
            for (k, v) in res.into_iter().enumerate() {
                per_out[k].push(as_tensor(v, "a Scan output")?);
            }
        }
        if batch == 0 {
            bail!("Scan (opset 8) with batch size 0 is not supported");
        }
        // pad scan outputs of shorter sequences with zeros
        let mut result = Vec::with_capacity(per_out.len());
        for (k, ts) in per_out.into_iter().enumerate() {
            let maxs = ts
                .iter()
                .map(|t| t.shape().to_vec())
                .max()
                .unwrap_or_default();
            let ts: Vec<Tensor> = if k >= spec.n_state {
                ts.into_iter()
                    .map(|t| pad_to(&t, &maxs))
                    .collect::<Result<_, _>>()?
            } else {
                ts
            };
            result.push(Value::Tensor(stack_tensors(&ts, 0)?));
        }
        Ok(result)
    }))
}
