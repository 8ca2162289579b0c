//! `OneHotEncoder`: each element becomes a row of `C` floats, 1 at the
//! position of its category in `cats_int64s` / `cats_strings`; `Y` is
//! float `[..., C]`. An unknown value gives zeros, or an error when
//! `zeros` is 0.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use std::collections::HashMap;

enum Categories {
    Ints(HashMap<i64, usize>),
    Strings(HashMap<String, usize>),
}

struct OneHotEncoderAttrs {
    cats: Categories,
    count: usize,
    zeros: bool,
}

impl OneHotEncoderAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let ints = a.ints_checked("cats_int64s")?.unwrap_or_default();
        let strs = a.strings_checked("cats_strings")?.unwrap_or_default();
        let (cats, count) = match (ints.is_empty(), strs.is_empty()) {
            (false, true) => {
                let n = ints.len();
                let mut m = HashMap::new();
                for (i, v) in ints.into_iter().enumerate() {
                    m.entry(v).or_insert(i);
                }
                (Categories::Ints(m), n)
            }
            (true, false) => {
                let n = strs.len();
                let mut m = HashMap::new();
                for (i, v) in strs.into_iter().enumerate() {
                    m.entry(v).or_insert(i);
                }
                (Categories::Strings(m), n)
            }
            _ => bail!(
                "exactly one of the attributes 'cats_int64s' and 'cats_strings' must be given"
            ),
        };
        Ok(OneHotEncoderAttrs {
            cats,
            count,
            zeros: a.int_checked("zeros")?.unwrap_or(1) != 0,
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = OneHotEncoderAttrs::decode(&cx.attrs).map_err(|e| ShapeError::new(e.to_string()))?;
    let s = cx.shape(0).map(|s| {
        let mut o = s.to_vec();
        o.push(Some(Expr::int(a.count as i64)));
        o
    });
    cx.set_tensor(0, DataType::Float, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = OneHotEncoderAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let positions: Vec<Option<usize>> = match (&a.cats, x) {
            (Categories::Strings(m), Tensor::Str(s)) => {
                s.iter().map(|v| m.get(v).copied()).collect()
            }
            (Categories::Strings(_), _) => {
                bail!("X must be strings for 'cats_strings', got {}", x.dtype())
            }
            (Categories::Ints(m), _) => {
                let Some(v) = x.to_f64_vec() else {
                    bail!("X must be numeric for 'cats_int64s', got {}", x.dtype());
                };
                v.into_iter().map(|f| m.get(&(f as i64)).copied()).collect()
            }
        };
        let mut shape = x.shape().to_vec();
        shape.push(a.count);
        crate::tensor::budget::check(&shape, 4)?;
        let mut out = vec![0.0f32; positions.len() * a.count];
        for (i, p) in positions.iter().enumerate() {
            match p {
                Some(j) => out[i * a.count + j] = 1.0,
                None if !a.zeros => {
                    bail!("element {i} of X is not a category, and attribute 'zeros' is 0")
                }
                None => {}
            }
        }
        Ok(vec![Value::Tensor(Tensor::from_vec(&shape, out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ml::test_node::{int, ints, run, strings};

    #[test]
    fn ints_strings_and_unknowns() {
        let x = Tensor::from_vec(&[2], vec![7i64, 9]).unwrap();
        let out = run(
            "OneHotEncoder",
            vec![ints("cats_int64s", &[9, 7, 5])],
            vec![x.clone()],
        )
        .unwrap();
        assert_eq!(
            out[0],
            Tensor::from_vec(&[2, 3], vec![0.0f32, 1.0, 0.0, 1.0, 0.0, 0.0]).unwrap()
        );
        let s = Tensor::from_vec(&[1, 2], vec!["b".to_string(), "z".to_string()]).unwrap();
        let out = run(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a", "b"])],
            vec![s.clone()],
        )
        .unwrap();
        assert_eq!(
            out[0],
            Tensor::from_vec(&[1, 2, 2], vec![0.0f32, 1.0, 0.0, 0.0]).unwrap()
        );
        let err = run(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a", "b"]), int("zeros", 0)],
            vec![s],
        )
        .unwrap_err();
        assert!(err.contains("zeros"), "{err}");
    }
}
