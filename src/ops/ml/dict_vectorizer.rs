//! `DictVectorizer`: a map is laid out as a dense row `[1, V]` over the
//! vocabulary (`string_vocabulary` or `int64_vocabulary`, `V` entries): the
//! value of each vocabulary key present in the map, 0 (or "") elsewhere;
//! keys outside the vocabulary are ignored.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use crate::value_type::TypeInfo;
use std::collections::HashMap;

enum Vocabulary {
    Strings(HashMap<String, usize>),
    Ints(HashMap<i64, usize>),
}

impl Vocabulary {
    fn decode(a: &Attrs) -> Result<(Vocabulary, usize), KernelError> {
        match (
            a.strings_checked("string_vocabulary")?,
            a.ints_checked("int64_vocabulary")?,
        ) {
            (Some(s), None) => {
                let n = s.len();
                Ok((Vocabulary::Strings(index_of(s)?), n))
            }
            (None, Some(i)) => {
                let n = i.len();
                Ok((Vocabulary::Ints(index_of(i)?), n))
            }
            _ => bail!("exactly one of the attributes 'string_vocabulary' and 'int64_vocabulary' must be given"),
        }
    }
}

fn index_of<K: std::hash::Hash + Eq + std::fmt::Debug>(
    keys: Vec<K>,
) -> Result<HashMap<K, usize>, KernelError> {
    let mut m = HashMap::with_capacity(keys.len());
    for (i, k) in keys.into_iter().enumerate() {
        if m.contains_key(&k) {
            bail!("the vocabulary lists {k:?} twice");
        }
        m.insert(k, i);
    }
    Ok(m)
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let (_, v) = Vocabulary::decode(&cx.attrs)?;
    let elem = match cx.input(0) {
        Some(TypeInfo::Map(_, value)) => value.elem().unwrap_or(DataType::Undefined),
        _ => DataType::Undefined,
    };
    cx.set_tensor(
        0,
        elem,
        Some(vec![Some(Expr::int(1)), Some(Expr::int(v as i64))]),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let (vocab, v) = Vocabulary::decode(&info.attrs)?;
    Ok(Box::new(move |_, ins| {
        let Some(Value::Map(m)) = ins.first().copied().flatten() else {
            bail!("input 0 must be a map");
        };
        // the row position of each map entry (None: not in the vocabulary)
        let slots: Vec<Option<usize>> = match (&vocab, m.keys()) {
            (Vocabulary::Strings(idx), Tensor::Str(k)) => {
                k.iter().map(|k| idx.get(k).copied()).collect()
            }
            (Vocabulary::Ints(idx), Tensor::I64(k)) => {
                k.iter().map(|k| idx.get(k).copied()).collect()
            }
            (_, k) => bail!(
                "the map's keys are {} but the vocabulary is of the other key type",
                k.dtype()
            ),
        };
        fn scatter<T: crate::tensor::Elem>(
            vals: &Tensor,
            slots: &[Option<usize>],
            v: usize,
        ) -> Result<Tensor, KernelError> {
            let Some(a) = T::view(vals) else {
                bail!("map values of type {} are not supported", vals.dtype());
            };
            let mut row = vec![T::default(); v];
            for (val, slot) in a.iter().zip(slots) {
                if let Some(s) = slot {
                    row[*s] = val.clone();
                }
            }
            Ok(Tensor::from_vec(&[1, v], row)?)
        }
        let out = match m.value_type() {
            DataType::Float => scatter::<f32>(m.values(), &slots, v)?,
            DataType::Double => scatter::<f64>(m.values(), &slots, v)?,
            DataType::Int64 => scatter::<i64>(m.values(), &slots, v)?,
            DataType::String => scatter::<String>(m.values(), &slots, v)?,
            other => bail!("map values must be float, double, int64 or string, got {other}"),
        };
        Ok(vec![Value::Tensor(out)])
    }))
}
