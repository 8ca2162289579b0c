//! `LabelEncoder`: maps each element through a key → value table, with a
//! default for keys not listed; the output has the input's shape.
//!
//! - opset 1: `classes_strings`; a string maps to its index (int64), an
//!   int64 to the string at that index; `default_int64` (-1) and
//!   `default_string` ("_Unused") otherwise.
//! - opset 2: `keys_strings|keys_int64s|keys_floats` to
//!   `values_strings|values_int64s|values_floats`, `default_string`,
//!   `default_int64`, `default_float` (-0.0).
//! - opset 4: `keys_tensor` / `values_tensor` / `default_tensor` of any
//!   type (default: "_Unused" for strings, -1 for integers, -0.0 for floats).
//!
//! Float keys match by value (NaN matches NaN, -0 matches 0). Values keep
//! their type exactly (an int64 value is never rounded through a float).

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::manip::gather_flat;
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{concat_flat, DataType, Key, Tensor, Value};
use std::collections::HashMap;

struct LabelEncoderAttrs {
    index: HashMap<Key, usize>,
    /// The values, then the default: `table[index[k]]`, or the last element.
    table: Tensor,
}

fn tensor_attr(a: &Attrs, name: &str) -> Result<Option<Tensor>, KernelError> {
    match a.tensor_checked(name)? {
        Some(p) => Ok(Some(crate::proto::from_proto(p)?)),
        None => Ok(None),
    }
}

impl LabelEncoderAttrs {
    /// `input`: the input's element type (opset 1 maps either way).
    fn decode(a: &Attrs, input: Option<DataType>) -> Result<Self, KernelError> {
        let (keys, values, default) = if let Some(classes) = a.strings_checked("classes_strings")? {
            let n = classes.len();
            match input {
                Some(DataType::Int64) => (
                    (0..n as i64).map(Key::Int).collect::<Vec<_>>(),
                    Tensor::from_vec(&[n], classes)?,
                    Tensor::scalar(
                        a.string_checked("default_string")?
                            .unwrap_or_else(|| "_Unused".into()),
                    ),
                ),
                _ => (
                    classes.into_iter().map(Key::Str).collect(),
                    Tensor::from_vec(&[n], (0..n as i64).collect())?,
                    Tensor::scalar(a.int_checked("default_int64")?.unwrap_or(-1)),
                ),
            }
        } else {
            let keys: Vec<Key> = if let Some(k) = a.strings_checked("keys_strings")? {
                k.into_iter().map(Key::Str).collect()
            } else if let Some(k) = a.ints_checked("keys_int64s")? {
                k.into_iter().map(Key::Int).collect()
            } else if let Some(k) = a.floats_checked("keys_floats")? {
                k.into_iter().map(|v| Key::float(v as f64)).collect()
            } else if let Some(t) = tensor_attr(a, "keys_tensor")? {
                Key::all_of(&t, "attribute 'keys_tensor'")?
            } else {
                bail!("one of the attributes 'keys_strings', 'keys_int64s', 'keys_floats', 'keys_tensor' (or 'classes_strings') is required");
            };
            let values: Tensor = if let Some(v) = a.strings_checked("values_strings")? {
                Tensor::from_vec(&[v.len()], v)?
            } else if let Some(v) = a.ints_checked("values_int64s")? {
                Tensor::from_vec(&[v.len()], v)?
            } else if let Some(v) = a.floats_checked("values_floats")? {
                Tensor::from_vec(&[v.len()], v)?
            } else if let Some(t) = tensor_attr(a, "values_tensor")? {
                t.reshape(&[t.len()])?
            } else {
                bail!("one of the attributes 'values_strings', 'values_int64s', 'values_floats', 'values_tensor' is required");
            };
            let dt = values.dtype();
            let default = match tensor_attr(a, "default_tensor")? {
                Some(t) => t,
                None => match dt {
                    DataType::String => Tensor::scalar(
                        a.string_checked("default_string")?
                            .unwrap_or_else(|| "_Unused".into()),
                    ),
                    DataType::Int64 => {
                        Tensor::scalar(a.int_checked("default_int64")?.unwrap_or(-1))
                    }
                    DataType::Float => {
                        Tensor::scalar(a.float_checked("default_float")?.unwrap_or(-0.0))
                    }
                    dt if dt.is_float() => {
                        crate::ops::kernels::f64_values::float_of(dt, &[], vec![-0.0])?
                    }
                    dt => crate::ops::kernels::f64_values::num_from_f64(dt, &[], vec![-1.0])?,
                },
            };
            (keys, values, default)
        };
        if keys.len() != values.len() {
            bail!("{} keys but {} values", keys.len(), values.len());
        }
        if default.len() != 1 || default.dtype() != values.dtype() {
            bail!(
                "the default must be one {} element, got {}{:?}",
                values.dtype(),
                default.dtype(),
                default.shape()
            );
        }
        // the first of repeated keys wins
        let mut index = HashMap::with_capacity(keys.len());
        for (i, k) in keys.into_iter().enumerate() {
            index.entry(k).or_insert(i);
        }
        let table = concat_flat(&[values, default])?;
        Ok(LabelEncoderAttrs { index, table })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = LabelEncoderAttrs::decode(&cx.attrs, cx.elem(0))?;
    let s = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, a.table.dtype(), s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    // opset 1 maps either way: the direction follows the input at run time
    let by_input = [DataType::String, DataType::Int64]
        .map(|t| LabelEncoderAttrs::decode(&info.attrs, Some(t)));
    let [from_strings, from_ints] = by_input;
    let (from_strings, from_ints) = (from_strings?, from_ints?);
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let a = if x.dtype() == DataType::Int64 {
            &from_ints
        } else {
            &from_strings
        };
        let missing = a.table.len() - 1;
        let idx: Vec<usize> = Key::all_of(x, "X")?
            .iter()
            .map(|k| a.index.get(k).copied().unwrap_or(missing))
            .collect();
        Ok(vec![Value::Tensor(gather_flat(&a.table, &idx, x.shape())?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::super::test_node::{int, ints, run, strings};
    use crate::tensor::Tensor;

    #[test]
    fn opset_1_maps_strings_to_indices_and_back() {
        let attrs = || {
            vec![
                strings("classes_strings", &["a", "b", "c"]),
                int("default_int64", -5),
            ]
        };
        let x = Tensor::from_vec(&[3], vec!["c".to_string(), "z".into(), "a".into()]).unwrap();
        assert_eq!(
            run("LabelEncoder", attrs(), vec![x]).unwrap()[0]
                .to_i64_vec()
                .unwrap(),
            vec![2, -5, 0]
        );
        let x = Tensor::from_vec(&[2], vec![1i64, 7]).unwrap();
        assert_eq!(
            run("LabelEncoder", attrs(), vec![x]).unwrap()[0]
                .string_values()
                .unwrap(),
            vec!["b", "_Unused"]
        );
    }

    #[test]
    fn int64_values_stay_exact() {
        let big = 9_007_199_254_740_993i64;
        let attrs = vec![
            strings("keys_strings", &["x"]),
            ints("values_int64s", &[big]),
        ];
        let x = Tensor::from_vec(&[2], vec!["x".to_string(), "y".into()]).unwrap();
        assert_eq!(
            run("LabelEncoder", attrs, vec![x]).unwrap()[0]
                .to_i64_vec()
                .unwrap(),
            vec![big, -1]
        );
    }
}
