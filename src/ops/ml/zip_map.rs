//! `ZipMap`: each row of class scores `X` (`[N, C]` float) becomes a map
//! from class label (`classlabels_strings` or `classlabels_int64s`, `C` of
//! them) to score; the output is a sequence of `N` maps.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Map, Tensor, Value};
use crate::value_type::TypeInfo;

/// The labels, as the map keys they become.
enum Labels {
    Strings(Vec<String>),
    Ints(Vec<i64>),
}

impl Labels {
    fn decode(a: &Attrs) -> Result<Labels, KernelError> {
        match (
            a.strings_checked("classlabels_strings")?,
            a.ints_checked("classlabels_int64s")?,
        ) {
            (Some(s), None) => Ok(Labels::Strings(s)),
            (None, Some(i)) => Ok(Labels::Ints(i)),
            _ => bail!("exactly one of the attributes 'classlabels_strings' and 'classlabels_int64s' must be given"),
        }
    }

    fn len(&self) -> usize {
        match self {
            Labels::Strings(s) => s.len(),
            Labels::Ints(i) => i.len(),
        }
    }

    fn key_type(&self) -> DataType {
        match self {
            Labels::Strings(_) => DataType::String,
            Labels::Ints(_) => DataType::Int64,
        }
    }

    fn keys(&self) -> Result<Tensor, KernelError> {
        Ok(match self {
            Labels::Strings(s) => Tensor::from_vec(&[s.len()], s.clone())?,
            Labels::Ints(i) => Tensor::from_vec(&[i.len()], i.clone())?,
        })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let labels = Labels::decode(&cx.attrs)?;
    cx.set(
        0,
        TypeInfo::Sequence(Box::new(TypeInfo::Map(
            labels.key_type(),
            Box::new(TypeInfo::tensor(DataType::Float, None)),
        ))),
    );
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let labels = Labels::decode(&info.attrs)?;
    let keys = labels.keys()?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let Tensor::F32(a) = x else {
            bail!("X must be float, got {}", x.dtype());
        };
        let c = labels.len();
        let (n, width) = match x.shape() {
            [w] => (1, *w),
            [n, w] => (*n, *w),
            s => bail!("X must have rank 1 or 2 ([N, C]), got shape {s:?}"),
        };
        if width != c {
            bail!("X has {width} scores per row but there are {c} class labels");
        }
        let flat: Vec<f32> = a.iter().copied().collect();
        let items = (0..n)
            .map(|r| {
                let row = flat[r * c..(r + 1) * c].to_vec();
                Map::new(keys.clone(), Tensor::from_vec(&[c], row)?)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(vec![Value::MapSequence {
            key_type: labels.key_type(),
            value_type: DataType::Float,
            items,
        }])
    }))
}
