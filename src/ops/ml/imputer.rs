//! `Imputer`: replaces `replaced_value_float` (NaN matches NaN) in float
//! inputs, or `replaced_value_int64` in integer inputs, by the per-feature
//! `imputed_value_floats` / `imputed_value_int64s` (one value, or one per
//! feature of the last axis). `Y` has `X`'s type and shape.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::num_from_f64;
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Value};

struct ImputerAttrs {
    floats: Vec<f64>,
    ints: Vec<i64>,
    replaced_float: f64,
    replaced_int: i64,
}

impl ImputerAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let floats: Vec<f64> = a
            .floats_f64_checked("imputed_value_floats")?
            .unwrap_or_default();
        let ints = a.ints_checked("imputed_value_int64s")?.unwrap_or_default();
        if floats.is_empty() == ints.is_empty() {
            bail!("exactly one of the attributes 'imputed_value_floats' and 'imputed_value_int64s' must be given");
        }
        Ok(ImputerAttrs {
            floats,
            ints,
            replaced_float: a.float_checked("replaced_value_float")?.unwrap_or(0.0) as f64,
            replaced_int: a.int_checked("replaced_value_int64")?.unwrap_or(0),
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let e = cx.elem_req(0)?;
    let s = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, e, s);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = ImputerAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let dt = x.dtype();
        let is_float = matches!(dt, DataType::Float | DataType::Double);
        let (imputed, name, replaced): (Vec<f64>, &str, f64) = if is_float {
            (a.floats.clone(), "imputed_value_floats", a.replaced_float)
        } else {
            let v = a.ints.iter().map(|&i| i as f64).collect();
            (v, "imputed_value_int64s", a.replaced_int as f64)
        };
        if imputed.is_empty() {
            bail!("attribute '{name}' is needed for an input of type {dt}");
        }
        let c = x.shape().last().copied().unwrap_or(1);
        if imputed.len() != 1 && imputed.len() != c {
            bail!(
                "attribute '{name}' has {} values; expected 1 or one per feature ({c})",
                imputed.len()
            );
        }
        let Some(v) = x.to_f64_vec() else {
            bail!("X must be numeric, got {dt}");
        };
        let out = v
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let hit = if replaced.is_nan() {
                    e.is_nan()
                } else {
                    e == replaced
                };
                if hit {
                    imputed[if imputed.len() == 1 { 0 } else { i % c }]
                } else {
                    e
                }
            })
            .collect();
        Ok(vec![Value::Tensor(num_from_f64(dt, x.shape(), out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use crate::ops::ml::test_node::{float, floats, int, ints, run};
    use crate::tensor::Tensor;

    #[test]
    fn nan_and_int_replacement() {
        let x = Tensor::from_vec(&[2, 2], vec![f32::NAN, 1.0, 2.0, f32::NAN]).unwrap();
        let attrs = vec![
            floats("imputed_value_floats", &[5.0, 6.0]),
            float("replaced_value_float", f32::NAN),
        ];
        let out = run("Imputer", attrs, vec![x]).unwrap();
        assert_eq!(
            out[0],
            Tensor::from_vec(&[2, 2], vec![5.0f32, 1.0, 2.0, 6.0]).unwrap()
        );
        let x = Tensor::from_vec(&[3], vec![-1i64, 4, -1]).unwrap();
        let attrs = vec![
            ints("imputed_value_int64s", &[9]),
            int("replaced_value_int64", -1),
        ];
        let out = run("Imputer", attrs, vec![x.clone()]).unwrap();
        assert_eq!(out[0], Tensor::from_vec(&[3], vec![9i64, 4, 9]).unwrap());
        let err = run(
            "Imputer",
            vec![ints("imputed_value_int64s", &[1, 2])],
            vec![x],
        )
        .unwrap_err();
        assert!(err.contains("imputed_value_int64s"), "{err}");
    }
}
