//! `CastMap`: a map from int64 keys to strings or floats becomes a tensor
//! `[1, K]`: in `DENSE` form the values in ascending key order, in `SPARSE`
//! form `max_map` slots with each value at its key (0 or "" elsewhere);
//! values are cast to `cast_to` (TO_FLOAT, TO_STRING, TO_INT64).

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};

#[derive(Clone, Copy)]
enum CastTo {
    Float,
    String,
    Int64,
}

struct CastMapAttrs {
    cast_to: CastTo,
    /// `None`: dense; `Some(n)`: sparse with `n` slots.
    sparse: Option<usize>,
}

impl CastMapAttrs {
    fn decode(a: &Attrs) -> Result<Self, KernelError> {
        let cast_to = match a
            .string_checked("cast_to")?
            .as_deref()
            .unwrap_or("TO_FLOAT")
        {
            "TO_FLOAT" => CastTo::Float,
            "TO_STRING" => CastTo::String,
            "TO_INT64" => CastTo::Int64,
            other => {
                bail!("attribute 'cast_to' must be TO_FLOAT, TO_STRING or TO_INT64, got '{other}'")
            }
        };
        let sparse = match a.string_checked("map_form")?.as_deref().unwrap_or("DENSE") {
            "DENSE" => None,
            "SPARSE" => {
                let n = a.int_checked("max_map")?.unwrap_or(1);
                if n < 1 {
                    bail!("attribute 'max_map' must be positive, got {n}");
                }
                let n =
                    usize::try_from(n).map_err(|_| KernelError::new("'max_map' is too large"))?;
                // the output row is allocated at this size: refuse it here
                crate::tensor::budget::check(&[1, n], 8)?;
                Some(n)
            }
            other => bail!("attribute 'map_form' must be DENSE or SPARSE, got '{other}'"),
        };
        Ok(CastMapAttrs { cast_to, sparse })
    }

    fn out_type(&self) -> DataType {
        match self.cast_to {
            CastTo::Float => DataType::Float,
            CastTo::String => DataType::String,
            CastTo::Int64 => DataType::Int64,
        }
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = CastMapAttrs::decode(&cx.attrs)?;
    let width = a.sparse.map(|n| Expr::int(n as i64));
    cx.set_tensor(0, a.out_type(), Some(vec![Some(Expr::int(1)), width]));
    Ok(())
}

/// One map value, as the cast needs it.
#[derive(Clone)]
enum Item {
    Num(f64),
    Text(String),
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = CastMapAttrs::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let Some(Value::Map(m)) = ins.first().copied().flatten() else {
            bail!("input 0 must be a map");
        };
        let Tensor::I64(keys) = m.keys() else {
            bail!("map keys must be int64, got {}", m.key_type());
        };
        let items: Vec<Item> = match m.values() {
            Tensor::Str(v) => v.iter().cloned().map(Item::Text).collect(),
            t => match t.to_f64_vec() {
                Some(v) => v.into_iter().map(Item::Num).collect(),
                None => bail!("map values must be strings or numbers, got {}", t.dtype()),
            },
        };
        let mut entries: Vec<(i64, Item)> = keys.iter().copied().zip(items).collect();
        entries.sort_by_key(|(k, _)| *k);
        let slots: Vec<Option<Item>> = match a.sparse {
            None => entries.into_iter().map(|(_, v)| Some(v)).collect(),
            Some(n) => {
                let mut s = vec![None; n];
                for (k, v) in entries {
                    if k < 0 || k as usize >= n {
                        bail!("key {k} is outside the {n} slots of 'max_map'");
                    }
                    s[k as usize] = Some(v);
                }
                s
            }
        };
        let w = slots.len();
        let out = match a.cast_to {
            CastTo::Float => Tensor::from_vec(
                &[1, w],
                slots
                    .iter()
                    .map(|s| s.as_ref().map_or(0.0, as_f64) as f32)
                    .collect(),
            )?,
            CastTo::Int64 => Tensor::from_vec(
                &[1, w],
                slots
                    .iter()
                    .map(|s| s.as_ref().map_or(0.0, as_f64) as i64)
                    .collect(),
            )?,
            CastTo::String => Tensor::from_vec(
                &[1, w],
                slots
                    .iter()
                    .map(|s| match s {
                        None => String::new(),
                        Some(Item::Text(t)) => t.clone(),
                        // as C++'s std::to_string prints a float
                        Some(Item::Num(v)) => format!("{v:.6}"),
                    })
                    .collect(),
            )?,
        };
        Ok(vec![Value::Tensor(out)])
    }))
}

/// A value as a number: strings parse as floats (unparsable text is NaN).
fn as_f64(i: &Item) -> f64 {
    match i {
        Item::Num(v) => *v,
        Item::Text(t) => t.trim().parse().unwrap_or(f64::NAN),
    }
}
