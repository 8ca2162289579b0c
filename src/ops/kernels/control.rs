//! Control flow kernels: If, Loop, Scan; and the tensor helpers they share
//! with the sequence kernels (slicing along an axis, stacking).

use super::manip::concat_tensors;
use super::norm_axis;
use crate::bail;
use crate::map_array;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::proto::GraphProto;
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::TypeInfo;
use ndarray::{Axis, Slice};

/// The sub-tensor at `index` along `axis`, the axis removed.
pub fn take_index(t: &Tensor, axis: usize, index: usize) -> Result<Tensor, KernelError> {
    if axis >= t.rank() || index >= t.shape()[axis] {
        bail!(
            "index {index} along axis {axis} is out of range for shape {:?}",
            t.shape()
        );
    }
    Ok(map_array!(t, a => a.index_axis(Axis(axis), index).to_owned()))
}

/// The elements `start..end` along `axis`.
pub fn take_range(
    t: &Tensor,
    axis: usize,
    start: usize,
    end: usize,
) -> Result<Tensor, KernelError> {
    if axis >= t.rank() || start > end || end > t.shape()[axis] {
        bail!(
            "range {start}..{end} along axis {axis} is out of range for shape {:?}",
            t.shape()
        );
    }
    Ok(map_array!(t, a => a
        .slice_axis(Axis(axis), Slice::from(start..end))
        .to_owned()))
}

/// Inserts an axis of size 1 at `axis`.
pub fn unsqueeze_at(t: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let mut shape = t.shape().to_vec();
    if axis > shape.len() {
        bail!("cannot insert axis {axis} into shape {shape:?}");
    }
    shape.insert(axis, 1);
    Ok(t.reshape(&shape)?)
}

/// Stacks tensors of one type and shape along a new axis.
pub fn stack_tensors(ts: &[Tensor], axis: usize) -> Result<Tensor, KernelError> {
    let Some(first) = ts.first() else {
        bail!("cannot stack zero tensors");
    };
    for (i, t) in ts.iter().enumerate() {
        if t.shape() != first.shape() {
            bail!(
                "tensor {i} has shape {:?}, tensor 0 has {:?}: cannot stack",
                t.shape(),
                first.shape()
            );
        }
    }
    // the expanded copies and the stacked result
    let mut out_shape = first.shape().to_vec();
    out_shape.insert(axis.min(out_shape.len()), ts.len());
    crate::tensor::budget::check(&out_shape, 2 * first.dtype().alloc_bytes())?;
    let ex: Vec<Tensor> = ts
        .iter()
        .map(|t| unsqueeze_at(t, axis))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&Tensor> = ex.iter().collect();
    concat_tensors(&refs, axis as i64, &ex[0])
}

/// Reverses a tensor along an axis.
pub fn reverse_axis(t: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    if axis >= t.rank() {
        bail!("axis {axis} is out of range for shape {:?}", t.shape());
    }
    Ok(map_array!(t, a => {
        let mut v = a.view();
        v.invert_axis(Axis(axis));
        v.to_owned()
    }))
}

/// The single boolean of a condition tensor.
pub fn bool_scalar(t: &Tensor, what: &str) -> Result<bool, KernelError> {
    if t.len() != 1 {
        bail!("{what} must have one element, got shape {:?}", t.shape());
    }
    match t {
        Tensor::Bool(a) => Ok(a.iter().next().copied().unwrap_or(false)),
        other => match other.to_f64_vec() {
            Some(v) if !v.is_empty() => Ok(v[0] != 0.0),
            _ => bail!("{what} must be bool, got {}", other.dtype()),
        },
    }
}

/// The declared types of a graph's outputs.
pub fn graph_output_types(g: &GraphProto) -> Vec<TypeInfo> {
    g.output
        .iter()
        .map(|o| {
            o.r#type
                .as_ref()
                .map(TypeInfo::from_proto)
                .unwrap_or(TypeInfo::Unknown)
        })
        .collect()
}

/// An empty stack (`[0, ...]`) of values of a declared type.
fn empty_stack(ty: &TypeInfo) -> Result<Value, KernelError> {
    match ty {
        TypeInfo::Tensor { elem, shape } => {
            let mut dims = vec![0usize];
            if let Some(s) = shape {
                for d in s {
                    dims.push(d.as_ref().and_then(|e| e.as_int()).unwrap_or(0).max(0) as usize);
                }
            }
            let elem = if *elem == DataType::Undefined {
                DataType::Float
            } else {
                *elem
            };
            Ok(Value::Tensor(Tensor::zeros(elem, &dims)?))
        }
        // an undeclared body output: nothing tells its type, float is a guess
        TypeInfo::Unknown => Ok(Value::Tensor(Tensor::zeros(DataType::Float, &[0])?)),
        _ => bail!("cannot build an empty scan output of type {}", ty.display()),
    }
}

fn as_tensor(v: Value, what: &str) -> Result<Tensor, KernelError> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => bail!("{what} must be a tensor, got {}", other.describe()),
    }
}

pub fn if_op(info: &NodeInfo) -> Result<Kernel, KernelError> {
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

thread_local! {
    /// Loop body steps computed once instead of per iteration, on this thread.
    static HOISTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many Loop body steps this thread has hoisted out of their loops
/// (each counted once per Loop run): shows that hoisting took place.
pub fn hoisted_steps() -> u64 {
    HOISTED.with(|c| c.get())
}

pub fn loop_op(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
    // input k, as Paddle2ONNX passes weights) stay fixed for the whole loop:
    // body steps reading only them, enclosing scopes and constants are
    // computed once before the first iteration.
    let invariant: Vec<usize> = (0..n_carried)
        .filter(|&k| {
            let name = g.input.get(2 + k).map(|v| v.name());
            name.is_some_and(|n| !n.is_empty()) && name == g.output.get(1 + k).map(|v| v.name())
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
        let mut pre: Option<std::collections::HashMap<String, Value>> = None;
        let mut i: i64 = 0;
        loop {
            if let Some(m) = m {
                if i >= m {
                    break;
                }
            }
            if cond == Some(false) {
                break;
            }
            crate::ops::limits::check_iteration(i as u64, "Loop").map_err(KernelError)?;
            let mut args = Vec::with_capacity(2 + n_carried);
            args.push(Value::Tensor(Tensor::scalar(i)));
            args.push(Value::Tensor(Tensor::scalar(cond.unwrap_or(true))));
            // the body's outputs replace every carried value: move them in
            args.append(&mut carried);
            let outs = match hoist.as_ref().filter(|_| cx.can_hoist()) {
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
                    cx.run_variant(&body, args, h, pre)?
                }
                None => cx.run_subgraph(&body, args)?,
            };
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

/// Attributes of a Scan node.
struct ScanSpec {
    n_state: usize,
    n_scan_in: usize,
    in_axes: Vec<i64>,
    in_dirs: Vec<i64>,
    out_axes: Vec<i64>,
    out_dirs: Vec<i64>,
}

pub fn scan(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
        let mut run = |ins: &[Value],
                       len_limit: Option<usize>|
         -> Result<Vec<Value>, KernelError> {
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
                crate::ops::limits::check_iteration(step as u64, "Scan").map_err(KernelError)?;
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

/// Pads a tensor with zeros at the end of axis 0 up to `shape`.
fn pad_to(t: &Tensor, shape: &[usize]) -> Result<Tensor, KernelError> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    if t.rank() != shape.len() || t.shape()[1..] != shape[1..] {
        bail!(
            "scan outputs of shapes {:?} and {shape:?} cannot be stacked",
            t.shape()
        );
    }
    let mut pshape = shape.to_vec();
    pshape[0] = shape[0] - t.shape()[0].min(shape[0]);
    let z = Tensor::zeros(t.dtype(), &pshape)?;
    concat_tensors(&[t, &z], 0, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_and_take() {
        let a = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        let b = Tensor::from_vec(&[2], vec![3.0f32, 4.0]).unwrap();
        let s = stack_tensors(&[a.clone(), b], 1).unwrap();
        assert_eq!(s.shape(), &[2, 2]);
        assert_eq!(s.to_f64_vec().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(take_index(&s, 1, 0).unwrap(), a);
        assert!(take_index(&s, 1, 2).is_err());
        let r = reverse_axis(&s, 0).unwrap();
        assert_eq!(r.to_f64_vec().unwrap(), vec![2.0, 4.0, 1.0, 3.0]);
    }
}
