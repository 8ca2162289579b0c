//! `CategoryMapper`: maps strings to int64 or int64 to strings through the
//! paired lists `cats_strings` / `cats_int64s`; a value not listed maps to
//! `default_int64` (-1) or `default_string` ("_Unused"). The output has the
//! input's shape.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use std::collections::HashMap;

struct CategoryMapperAttrs {
    to_int: HashMap<String, i64>,
    to_string: HashMap<i64, String>,
    default_int64: i64,
    default_string: String,
}

impl CategoryMapperAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let strings = a.strings_checked("cats_strings")?.unwrap_or_default();
        let ints = a.ints_checked("cats_int64s")?.unwrap_or_default();
        if strings.len() != ints.len() {
            bail!(
                "attributes 'cats_strings' ({}) and 'cats_int64s' ({}) must have the same length",
                strings.len(),
                ints.len()
            );
        }
        // the first pairing of a repeated entry wins, in both directions
        let mut to_int = HashMap::with_capacity(ints.len());
        let mut to_string = HashMap::with_capacity(ints.len());
        for (s, &i) in strings.iter().zip(&ints) {
            to_int.entry(s.clone()).or_insert(i);
            to_string.entry(i).or_insert_with(|| s.clone());
        }
        Ok(CategoryMapperAttrs {
            to_int,
            to_string,
            default_int64: a.int_checked("default_int64")?.unwrap_or(-1),
            default_string: a
                .string_checked("default_string")?
                .unwrap_or_else(|| "_Unused".to_string()),
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let out = match cx.elem(0) {
        Some(DataType::String) => DataType::Int64,
        Some(DataType::Int64) => DataType::String,
        Some(other) => {
            return Err(ShapeError::new(format!(
                "X must be string or int64, got {other}"
            )))
        }
        None => DataType::Undefined,
    };
    let s = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, out, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = CategoryMapperAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let out = match x {
            Tensor::Str(v) => {
                Tensor::I64(v.mapv(|s| *a.to_int.get(&s).unwrap_or(&a.default_int64)))
            }
            Tensor::I64(v) => Tensor::Str(v.mapv(|i| {
                a.to_string
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| a.default_string.clone())
            })),
            other => bail!("X must be string or int64, got {}", other.dtype()),
        };
        Ok(vec![Value::Tensor(out)])
    }))
}

#[cfg(test)]
mod tests {
    use super::super::test_node::{ints, run, string, strings};
    use crate::tensor::Tensor;

    #[test]
    fn maps_both_ways_with_defaults() {
        let attrs = || {
            vec![
                strings("cats_strings", &["a", "b"]),
                ints("cats_int64s", &[7, 9]),
                string("default_string", "?"),
            ]
        };
        let x = Tensor::from_vec(&[3], vec!["b".to_string(), "z".into(), "a".into()]).unwrap();
        let y = run("CategoryMapper", attrs(), vec![x]).unwrap();
        assert_eq!(y[0].to_i64_vec().unwrap(), vec![9, -1, 7]);
        let x = Tensor::from_vec(&[2, 1], vec![7i64, 8]).unwrap();
        let y = run("CategoryMapper", attrs(), vec![x]).unwrap();
        assert_eq!(y[0].string_values().unwrap(), vec!["a", "?"]);
        assert_eq!(y[0].shape(), &[2, 1]);
    }
}
