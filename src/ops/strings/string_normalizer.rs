//! `StringNormalizer`: stopword removal then case change on a `[C]` or
//! `[1, C]` string tensor.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let r = cx.rank(0);
    let d = if cx.attrs.strings("stopwords").is_some_and(|s| !s.is_empty()) {
        Some(cx.fresh())
    } else {
        cx.shape(0).and_then(|s| s.last().cloned()).flatten()
    };
    let shape = match r {
        Some(1) => Some(vec![d]),
        Some(2) => Some(vec![Some(Expr::int(1)), d]),
        _ => None,
    };
    cx.set_tensor(0, DataType::String, shape);
    Ok(())
}

/// StringNormalizer (a string op kept here with the other non-numeric
/// kernels): stopword removal then case change, on `[C]` or `[1, C]`.
pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
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
