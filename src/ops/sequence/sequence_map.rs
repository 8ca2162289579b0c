//! `SequenceMap`: the `body` subgraph run once per position of the input
//! sequences (tensor inputs passed whole), its outputs collected into
//! sequences.

use super::sequence_value::{seq, seq_in, set_seq};
use crate::bail;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::kernels::axis_slices::graph_output_types;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::TypeInfo;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let mut ins = Vec::with_capacity(cx.num_inputs());
    for i in 0..cx.num_inputs() {
        ins.push(match cx.input(i) {
            Some(TypeInfo::Sequence(t)) => Some((**t).clone()),
            other => other.cloned(),
        });
    }
    let outs = cx.infer_subgraph("body", ins)?;
    for (k, t) in outs.into_iter().enumerate() {
        set_seq(cx, k, t.unwrap_or(TypeInfo::Unknown));
    }
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
