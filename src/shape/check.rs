//! Agreement of inference with a run: each produced value's runtime shape
//! against its inferred shape resolved with the bindings (`check`), and
//! binding symbols from the shapes of given inputs.

use super::engine::InferReport;
use crate::expr::Bindings;
use crate::value_type::{Dim, TypeInfo};
use serde::Serialize;

/// The verdict for one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CheckStatus {
    #[serde(rename = "OK")]
    Ok,
    #[serde(rename = "MISMATCH")]
    Mismatch,
    #[serde(rename = "UNKNOWN")]
    Unknown,
}

impl CheckStatus {
    pub fn name(self) -> &'static str {
        match self {
            CheckStatus::Ok => "OK",
            CheckStatus::Mismatch => "MISMATCH",
            CheckStatus::Unknown => "UNKNOWN",
        }
    }
}

/// One row of `check`.
#[derive(Clone, Debug)]
pub struct CheckRow {
    pub name: String,
    pub runtime: Vec<usize>,
    /// The inferred dims (`None`: unknown rank or no report for the value).
    pub inferred: Option<Vec<Dim>>,
    pub resolved: Option<Vec<Option<i64>>>,
    pub status: CheckStatus,
}

/// Compares runtime shapes with the inferred shapes of a report.
pub fn check_shapes(
    report: &InferReport,
    bindings: &Bindings,
    produced: &[(String, Vec<usize>)],
) -> Vec<CheckRow> {
    let index = report.index();
    let extended = report.extend_bindings(bindings);
    produced
        .iter()
        .map(|(name, rt)| {
            let inferred = index
                .get(name.as_str())
                .and_then(|v| v.ty.shape())
                .map(|d| d.to_vec());
            let resolved = inferred
                .as_ref()
                .map(|d| InferReport::resolve_extended(d, &extended));
            let status = match &resolved {
                Some(rv) if rv.len() != rt.len() => CheckStatus::Mismatch,
                Some(rv)
                    if rv
                        .iter()
                        .zip(rt)
                        .any(|(x, &y)| x.is_some_and(|x| x != y as i64)) =>
                {
                    CheckStatus::Mismatch
                }
                Some(rv) if rv.iter().all(|x| x.is_some()) => CheckStatus::Ok,
                _ => CheckStatus::Unknown,
            };
            CheckRow {
                name: name.clone(),
                runtime: rt.clone(),
                inferred,
                resolved,
                status,
            }
        })
        .collect()
}

/// A given input: its name, declared type, and the shape of its value.
pub type GivenInput = (String, Option<TypeInfo>, Option<Vec<usize>>);

/// Where a symbol got its value: (value, input name, axis).
type Origin = (i64, String, usize);

/// Binds the plain symbols of declared input shapes (`float[N,4]`) from the
/// shapes of the given values. `fixed` are bindings that must not change;
/// an input that disagrees with one, or two inputs that disagree, is an
/// error naming the input, axis, symbol and both values.
pub fn bind_symbols(inputs: &[GivenInput], fixed: &Bindings) -> Result<Bindings, String> {
    let mut found: std::collections::BTreeMap<String, Origin> = Default::default();
    for (name, ty, shape) in inputs {
        let (Some(decl), Some(shape)) = (ty.as_ref().and_then(|t| t.shape()), shape) else {
            continue;
        };
        for (axis, (d, &got)) in decl.iter().zip(shape).enumerate() {
            let Some(e) = d else { continue };
            let syms = e.symbols();
            let sym = e.to_string();
            if syms.len() != 1 || !syms.contains(&sym) {
                continue;
            }
            let got = got as i64;
            if let Some((prev, who, ax)) = found.get(&sym) {
                if *prev != got {
                    return Err(format!(
                        "input '{name}' axis {axis}: {sym} = {got}, but input '{who}' axis {ax} gives {sym} = {prev}"
                    ));
                }
                continue;
            }
            if let Some(&bound) = fixed.get(&sym) {
                if bound != got {
                    return Err(format!(
                        "input '{name}' axis {axis}: {sym} is bound to {bound}, but the input has {got}"
                    ));
                }
            }
            found.insert(sym, (got, name.clone(), axis));
        }
    }
    Ok(found.into_iter().map(|(k, (v, _, _))| (k, v)).collect())
}
