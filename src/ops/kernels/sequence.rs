//! Sequence and optional kernels: SequenceEmpty, SequenceConstruct,
//! SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
//! SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
//! OptionalHasElement, OptionalGetElement.

use super::control::{graph_output_types, stack_tensors, take_index, take_range};
use super::manip::concat_tensors;
use super::norm_axis;
use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};

fn seq_in<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
) -> Result<(DataType, &'v Vec<Tensor>), KernelError> {
    match ins.get(i).copied().flatten() {
        Some(Value::Sequence { elem_type, items }) => Ok((*elem_type, items)),
        Some(v) => bail!("input {i} must be a sequence, got {}", v.describe()),
        None => bail!("input {i} is missing"),
    }
}

/// A scalar position as an index into `0..=len` (insert) or `0..len`.
fn position(t: &Tensor, len: usize, inclusive_end: bool) -> Result<usize, KernelError> {
    let v = t.to_i64_vec()?;
    if v.len() != 1 {
        bail!("position must be a scalar, got shape {:?}", t.shape());
    }
    let n = len as i64;
    let p = v[0];
    let hi = if inclusive_end { n } else { n - 1 };
    if p < -n || p > hi {
        bail!("position {p} is out of range for a sequence of {len} tensors");
    }
    Ok(if p < 0 { p + n } else { p } as usize)
}

fn seq(elem_type: DataType, items: Vec<Tensor>) -> Value {
    Value::Sequence { elem_type, items }
}

fn check_type(want: DataType, t: &Tensor) -> Result<(), KernelError> {
    if want != DataType::Undefined && t.dtype() != want {
        bail!("a tensor of {} cannot join a sequence of {want}", t.dtype());
    }
    Ok(())
}

pub fn sequence_empty(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let code = info.attrs.int_or("dtype", DataType::Float.code() as i64);
    let dt = DataType::from_code(code as i32)
        .ok_or_else(|| KernelError::new(format!("dtype {code} is not an element type")))?;
    Ok(Box::new(move |_, _| Ok(vec![seq(dt, vec![])])))
}

pub fn sequence_construct(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let mut items = Vec::with_capacity(ins.len());
        for i in 0..ins.len() {
            items.push(tensor_in(ins, i)?.clone());
        }
        let Some(first) = items.first() else {
            bail!("SequenceConstruct needs at least one input");
        };
        let dt = first.dtype();
        for t in &items {
            check_type(dt, t)?;
        }
        Ok(vec![seq(dt, items)])
    }))
}

pub fn sequence_insert(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (dt, items) = seq_in(ins, 0)?;
        let t = tensor_in(ins, 1)?;
        let dt = if dt == DataType::Undefined {
            t.dtype()
        } else {
            dt
        };
        check_type(dt, t)?;
        let pos = match opt_tensor_in(ins, 2)? {
            Some(p) => position(p, items.len(), true)?,
            None => items.len(),
        };
        let mut items = items.clone();
        items.insert(pos, t.clone());
        Ok(vec![seq(dt, items)])
    }))
}

pub fn sequence_at(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        let pos = position(tensor_in(ins, 1)?, items.len(), false)?;
        Ok(vec![Value::Tensor(items[pos].clone())])
    }))
}

pub fn sequence_erase(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (dt, items) = seq_in(ins, 0)?;
        if items.is_empty() {
            bail!("cannot erase from an empty sequence");
        }
        let pos = match opt_tensor_in(ins, 1)? {
            Some(p) => position(p, items.len(), false)?,
            None => items.len() - 1,
        };
        let mut items = items.clone();
        items.remove(pos);
        Ok(vec![seq(dt, items)])
    }))
}

pub fn sequence_length(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        Ok(vec![Value::Tensor(Tensor::scalar(items.len() as i64))])
    }))
}

pub fn split_to_sequence(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let keepdims = info.attrs.int_or("keepdims", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let ax = norm_axis(axis, x.rank())?;
        let n = x.shape()[ax];
        let mut items = vec![];
        match opt_tensor_in(ins, 1)? {
            None => {
                for i in 0..n {
                    let t = if keepdims {
                        take_range(x, ax, i, i + 1)?
                    } else {
                        take_index(x, ax, i)?
                    };
                    items.push(t);
                }
            }
            Some(s) => {
                let v = s.to_i64_vec()?;
                let sizes: Vec<usize> = if s.rank() == 0 {
                    let c = v[0];
                    if c <= 0 {
                        bail!("split size {c} must be positive");
                    }
                    let c = c as usize;
                    let mut out = vec![c; n / c];
                    if n % c != 0 {
                        out.push(n % c);
                    }
                    out
                } else {
                    if v.iter().any(|&d| d < 0) {
                        bail!("split {v:?} has a negative size");
                    }
                    let total: i64 = v.iter().fold(0i64, |a, &b| a.saturating_add(b));
                    if total != n as i64 {
                        bail!("split {v:?} sums to {total}, axis {ax} has {n}");
                    }
                    v.iter().map(|&d| d as usize).collect()
                };
                let mut start = 0;
                for sz in sizes {
                    items.push(take_range(x, ax, start, start + sz)?);
                    start += sz;
                }
            }
        }
        Ok(vec![seq(x.dtype(), items)])
    }))
}

pub fn concat_from_sequence(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info
        .attrs
        .int("axis")
        .ok_or_else(|| KernelError::new("ConcatFromSequence needs the 'axis' attribute"))?;
    let new_axis = info.attrs.int_or("new_axis", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        let Some(first) = items.first() else {
            bail!("ConcatFromSequence of an empty sequence");
        };
        if new_axis {
            let ax = norm_axis(axis, first.rank() + 1)?;
            Ok(vec![Value::Tensor(stack_tensors(items, ax)?)])
        } else {
            let refs: Vec<&Tensor> = items.iter().collect();
            Ok(vec![Value::Tensor(concat_tensors(&refs, axis, first)?)])
        }
    }))
}

pub fn sequence_map(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let body = info.subgraph("body")?;
    let g = info
        .attrs
        .graph("body")
        .ok_or_else(|| KernelError::new("SequenceMap needs the 'body' attribute"))?;
    let out_types = graph_output_types(g);
    let n_out = info.node.output.len();
    Ok(Box::new(move |cx, ins| {
        let (_, first) = seq_in(ins, 0)?;
        let n = first.len();
        for (i, v) in ins.iter().enumerate().skip(1) {
            if let Some(Value::Sequence { items, .. }) = v {
                if items.len() != n {
                    bail!(
                        "sequence input {i} has {} tensors, input 0 has {n}",
                        items.len()
                    );
                }
            }
        }
        let mut outs: Vec<Vec<Tensor>> = vec![vec![]; n_out];
        for k in 0..n {
            let mut args = Vec::with_capacity(ins.len());
            for (i, v) in ins.iter().enumerate() {
                match v {
                    Some(Value::Sequence { items, .. }) => {
                        args.push(Value::Tensor(items[k].clone()))
                    }
                    Some(v) => args.push((*v).clone()),
                    None => bail!("input {i} is missing"),
                }
            }
            let res = cx.run_subgraph(&body, args)?;
            if res.len() < n_out {
                bail!("the SequenceMap body produced {} outputs", res.len());
            }
            for (o, v) in outs.iter_mut().zip(res) {
                match v {
                    Value::Tensor(t) => o.push(t),
                    other => bail!("the body output must be a tensor, got {}", other.describe()),
                }
            }
        }
        Ok(outs
            .into_iter()
            .enumerate()
            .map(|(j, items)| {
                let dt = items
                    .first()
                    .map(|t| t.dtype())
                    .or_else(|| out_types.get(j).and_then(|t| t.elem()))
                    .unwrap_or(DataType::Undefined);
                seq(dt, items)
            })
            .collect())
    }))
}

pub fn optional(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        Ok(vec![Value::Optional(
            ins.first().copied().flatten().map(|v| Box::new(v.clone())),
        )])
    }))
}

pub fn optional_has_element(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let has = match ins.first().copied().flatten() {
            None | Some(Value::Optional(None)) => false,
            Some(_) => true,
        };
        Ok(vec![Value::Tensor(Tensor::scalar(has))])
    }))
}

pub fn optional_get_element(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| match ins.first().copied().flatten() {
        Some(Value::Optional(Some(v))) => Ok(vec![(**v).clone()]),
        Some(Value::Optional(None)) => bail!("the optional input is empty"),
        Some(v) => Ok(vec![v.clone()]),
        None => bail!("input 0 is missing"),
    }))
}

/// StringNormalizer (a string op kept here with the other non-numeric
/// kernels): stopword removal then case change, on `[C]` or `[1, C]`.
pub fn string_normalizer(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let action = info.attrs.string_or("case_change_action", "NONE");
    let lower = match action.as_str() {
        "LOWER" => Some(true),
        "UPPER" => Some(false),
        "NONE" => None,
        other => bail!("unknown case_change_action '{other}'"),
    };
    let sensitive = info.attrs.int_or("is_case_sensitive", 0) != 0;
    let stop: Vec<String> = info
        .attrs
        .strings("stopwords")
        .unwrap_or_default()
        .into_iter()
        .map(|w| if sensitive { w } else { w.to_lowercase() })
        .collect();
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let Some(vals) = x.string_values() else {
            bail!("X must be a string tensor, got {}", x.dtype());
        };
        let two_d = match x.shape() {
            [_] => false,
            [1, _] => true,
            other => bail!("X must be [C] or [1, C], got {other:?}"),
        };
        let mut out: Vec<String> = vals
            .into_iter()
            .filter(|v| {
                let key = if sensitive {
                    v.clone()
                } else {
                    v.to_lowercase()
                };
                !stop.contains(&key)
            })
            .map(|v| match lower {
                Some(true) => v.to_lowercase(),
                Some(false) => v.to_uppercase(),
                None => v,
            })
            .collect();
        if out.is_empty() {
            out.push(String::new());
        }
        let shape = if two_d {
            vec![1, out.len()]
        } else {
            vec![out.len()]
        };
        Ok(vec![Value::Tensor(Tensor::from_vec(&shape, out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let p = Tensor::scalar(-1i64);
        assert_eq!(position(&p, 3, false).unwrap(), 2);
        assert_eq!(position(&Tensor::scalar(3i64), 3, true).unwrap(), 3);
        assert!(position(&Tensor::scalar(3i64), 3, false).is_err());
        assert!(position(&Tensor::scalar(-4i64), 3, true).is_err());
    }

    #[test]
    fn type_check() {
        assert!(check_type(DataType::Float, &Tensor::scalar(1.0f32)).is_ok());
        assert!(check_type(DataType::Float, &Tensor::scalar(1i64)).is_err());
    }
}
