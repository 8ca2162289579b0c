//! `StringSplit`: each string split as Python's `str.split` does, padded
//! to the longest split, with the split counts.

use super::string_values::strings_of;
use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::shape_rules::shape_of;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    let y = s.clone().map(|mut v| {
        v.push(None);
        v
    });
    cx.set_tensor(0, DataType::String, y);
    cx.set_tensor(1, DataType::Int64, s);
    Ok(())
}

/// Python `str.split` semantics: `None` delimiter splits on whitespace runs;
/// `maxsplit` limits the number of splits.
pub fn split_one(s: &str, delim: Option<&str>, maxsplit: Option<usize>) -> Vec<String> {
    match delim {
        Some(d) => match maxsplit {
            Some(m) => s.splitn(m + 1, d).map(str::to_string).collect(),
            None => s.split(d).map(str::to_string).collect(),
        },
        None => {
            let mut parts = Vec::new();
            let mut rest = s.trim_start();
            while !rest.is_empty() {
                if maxsplit.is_some_and(|m| parts.len() == m) {
                    parts.push(rest.to_string());
                    break;
                }
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                parts.push(rest[..end].to_string());
                rest = rest[end..].trim_start();
            }
            parts
        }
    }
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let delim = info.attrs.string("delimiter").filter(|d| !d.is_empty());
    let maxsplit = match info.attrs.int("maxsplit") {
        Some(m) if m < 0 => bail!("maxsplit must be non-negative, got {m}"),
        Some(m) => Some(m as usize),
        None => None,
    };
    Ok(Box::new(move |_, ins| {
        let x = strings_of(tensor_in(ins, 0)?, "X")?;
        let parts: Vec<Vec<String>> = x
            .iter()
            .map(|s| split_one(s, delim.as_deref(), maxsplit))
            .collect();
        let width = parts.iter().map(Vec::len).max().unwrap_or(0);
        let mut flat = Vec::with_capacity(parts.len() * width);
        let mut counts = Vec::with_capacity(parts.len());
        for p in parts {
            counts.push(p.len() as i64);
            let n = p.len();
            flat.extend(p);
            flat.extend(std::iter::repeat_n(String::new(), width - n));
        }
        let mut ysh = x.shape().to_vec();
        ysh.push(width);
        Ok(vec![
            Value::Tensor(Tensor::from_vec(&ysh, flat)?),
            Value::Tensor(Tensor::from_vec(x.shape(), counts)?),
        ])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_like_python() {
        assert_eq!(split_one("  a  b c ", None, None), vec!["a", "b", "c"]);
        assert_eq!(split_one("a,,b", Some(","), None), vec!["a", "", "b"]);
        assert_eq!(split_one("a,b,c", Some(","), Some(1)), vec!["a", "b,c"]);
        assert_eq!(split_one(" a b  c", None, Some(1)), vec!["a", "b  c"]);
        assert!(split_one("", None, None).is_empty());
        assert_eq!(split_one("", Some(","), None), vec![""]);
    }
}
