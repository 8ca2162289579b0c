//! The class labels of a classifier (`classlabels_strings` or
//! `classlabels_ints`) and the `Y` label tensor built from chosen classes.

use crate::ops::Attrs;
use crate::ops::KernelError;
use crate::tensor::{DataType, Tensor};

/// A classifier's labels: strings when `classlabels_strings` is given,
/// otherwise int64 (possibly none).
#[derive(Clone, Debug, PartialEq)]
pub enum ClassLabels {
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl ClassLabels {
    /// Decodes `classlabels_strings` / `classlabels_ints`; both given is an
    /// error naming them.
    pub fn decode(a: &Attrs) -> Result<ClassLabels, KernelError> {
        let s = a
            .strings_checked("classlabels_strings")?
            .unwrap_or_default();
        let i = a.ints_checked("classlabels_ints")?.unwrap_or_default();
        if !s.is_empty() && !i.is_empty() {
            return Err(KernelError::new(
                "attributes 'classlabels_strings' and 'classlabels_ints' are both given",
            ));
        }
        Ok(if s.is_empty() {
            ClassLabels::Ints(i)
        } else {
            ClassLabels::Strings(s)
        })
    }

    /// The number of labels.
    pub fn count(&self) -> usize {
        match self {
            ClassLabels::Ints(v) => v.len(),
            ClassLabels::Strings(v) => v.len(),
        }
    }

    /// The element type of the label output.
    pub fn elem(&self) -> DataType {
        match self {
            ClassLabels::Ints(_) => DataType::Int64,
            ClassLabels::Strings(_) => DataType::String,
        }
    }

    /// The labels `0` and `1` in this label type (a binary classifier
    /// without two labels of its own).
    pub fn default_binary(&self) -> ClassLabels {
        match self {
            ClassLabels::Ints(_) => ClassLabels::Ints(vec![0, 1]),
            ClassLabels::Strings(_) => ClassLabels::Strings(vec!["0".into(), "1".into()]),
        }
    }

    /// The `[N]` tensor of the labels of the chosen classes; a class without
    /// a label is an error naming the attribute.
    pub fn tensor(&self, picks: &[usize]) -> Result<Tensor, KernelError> {
        let missing = |c: usize, name: &str, len: usize| {
            KernelError::new(format!(
                "class {c} has no label: attribute '{name}' has {len} entries"
            ))
        };
        let n = [picks.len()];
        Ok(match self {
            ClassLabels::Ints(v) => {
                let out = picks
                    .iter()
                    .map(|&c| {
                        v.get(c)
                            .copied()
                            .ok_or_else(|| missing(c, "classlabels_ints", v.len()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Tensor::from_vec(&n, out)?
            }
            ClassLabels::Strings(v) => {
                let out = picks
                    .iter()
                    .map(|&c| {
                        v.get(c)
                            .cloned()
                            .ok_or_else(|| missing(c, "classlabels_strings", v.len()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Tensor::from_vec(&n, out)?
            }
        })
    }
}
