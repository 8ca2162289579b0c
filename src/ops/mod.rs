//! The operator table: (domain, op type) → shape rule and kernel builder.
//!
//! Inference ([`crate::shape`]) and the runtime ([`crate::runtime`]) both
//! look operators up here. An operator lives in one file of its family's
//! folder (`ops/<family>/<op>.rs`): its shape rule (`shape`), its kernel
//! builder (`kernel`) and their tests; the family's `TABLE` lists it with
//! one [`op_def!`] line. A rule or kernel that depends on the opset version
//! reads it from its context. Adding an operator is one file and one line.
//! [`kernels`] holds only the compute several families (or the plan's
//! passes) share: the GEMM engine, the conv engine, the sliding window, axis
//! slices, the numeric traits, f32 exp and f64 helpers; [`shape_rules`] the
//! helpers rules share (broadcasting, axes, type merging).
//!
//! The operator layer imports neither engine's machinery: what a rule sees
//! is [`InferCtx`]; [`KernelError`], the operator meaning both engines share
//! ([`slice_indices`], [`constant_value`]) and the kernel interface
//! ([`kernel`]) live here. A kernel reaches the engine that runs it only
//! through [`kernel::Subgraph`] and [`kernel::RunCtx`], which the runtime
//! supplies.

/// One table entry whose shape rule and kernel builder are the `shape`
/// and `kernel` functions of the operator's own module:
/// `op_def!("", "Relu", 6, relu)`, or `op_def!("", "RandomNormal", 1,
/// random_normal, nondeterministic)` for an operator that draws numbers.
macro_rules! op_def {
    ($domain:literal, $op:literal, $since:literal, $module:ident) => {
        $crate::ops::op_def!(@entry $domain, $op, $since, $module, true)
    };
    ($domain:literal, $op:literal, $since:literal, $module:ident, nondeterministic) => {
        $crate::ops::op_def!(@entry $domain, $op, $since, $module, false)
    };
    (@entry $domain:literal, $op:literal, $since:literal, $module:ident, $det:literal) => {
        $crate::ops::OpDef {
            domain: $domain,
            op_type: $op,
            since: $since,
            shape: $module::shape,
            kernel: $module::kernel,
            deterministic: $det,
        }
    };
}
pub(crate) use op_def;

mod attention;
mod attrs;
pub mod constant_value;
pub(crate) mod control;
mod elementwise;
mod image;
mod infer_ctx;
pub mod kernel;
mod kernel_error;
pub mod kernels;
pub mod limits;
mod linalg;
mod loss;
mod manip;
mod ml;
mod nn;
mod random;
mod reduce;
mod rnn;
mod sequence;
pub mod shape_rules;
mod signal;
pub mod slice_indices;
mod strings;
mod tables;
#[cfg(test)]
mod test_kernel;
mod training;

pub use attrs::{AttrTypeError, Attrs};
pub use infer_ctx::{InferCtx, ShapeError, ShapeRule, SymValue};
pub use kernel_error::KernelError;

use crate::proto::{canonical_domain, display_domain};
use kernel::KernelBuilder;

/// One operator: where it lives, how its shapes are inferred, how it runs.
#[derive(Debug)]
pub struct OpDef {
    /// `""` for the default ONNX domain.
    pub domain: &'static str,
    pub op_type: &'static str,
    /// First opset version the entry covers (the operator's first version).
    pub since: i64,
    /// Infers the node's output types and shapes.
    pub shape: ShapeRule,
    /// Builds the node's kernel, its attributes decoded once.
    pub kernel: KernelBuilder,
    /// Whether the outputs are a function of the inputs alone (false for
    /// random draws): a nondeterministic node is never folded into a
    /// constant, and its outputs are not compared with expected values.
    pub deterministic: bool,
}

/// Finds the operator for a node's domain, op type and the model's opset
/// version of that domain.
pub fn lookup(domain: &str, op_type: &str, opset: i64) -> Option<&'static OpDef> {
    resolve(domain, op_type, opset).ok()
}

/// The newest opset version of each standard domain, as the ONNX release
/// the operators follow defines them (ONNX 1.23: `onnx.defs` lists
/// ai.onnx up to 28, ai.onnx.ml up to 5). A model importing a newer one
/// may mean anything by any operator, so its standard nodes are refused;
/// other domains (a converter's own) carry no such bound.
pub const NEWEST_OPSETS: &[(&str, i64)] =
    &[("", 28), ("ai.onnx.ml", 5), ("ai.onnx.preview.training", 1)];

/// Why a node's operator has no definition at the model's opset: the
/// message names the operator, the domain and the versions involved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    /// No version of the operator is implemented (or it does not exist).
    #[error("operator '{op_type}' of domain '{}' is not implemented", display_domain(.domain))]
    Unknown { op_type: String, domain: String },
    /// The operator exists from a later opset than the model imports.
    #[error(
        "operator '{op_type}' of domain '{}' first appears in opset {first}; the model imports opset {opset}",
        display_domain(.domain)
    )]
    BeforeFirstVersion {
        op_type: String,
        domain: String,
        first: i64,
        opset: i64,
    },
    /// The model imports an opset newer than any the standard has.
    #[error(
        "operator '{op_type}': the model imports opset {opset} of domain '{}', newer than {newest}, the newest onnx-light knows",
        display_domain(.domain)
    )]
    NewerOpset {
        op_type: String,
        domain: String,
        opset: i64,
        newest: i64,
    },
}

/// The definition a node of `op_type` in `domain` runs with when the model
/// imports `opset` of that domain (the entry with the greatest `since` not
/// after it), or why there is none.
pub fn resolve(domain: &str, op_type: &str, opset: i64) -> Result<&'static OpDef, Unsupported> {
    let domain = canonical_domain(domain);
    if let Some(&(_, newest)) = NEWEST_OPSETS.iter().find(|(d, _)| *d == domain) {
        if opset > newest {
            return Err(Unsupported::NewerOpset {
                op_type: op_type.to_string(),
                domain: domain.to_string(),
                opset,
                newest,
            });
        }
    }
    let versions = || tables::all().filter(|d| d.domain == domain && d.op_type == op_type);
    if let Some(d) = versions()
        .filter(|d| d.since <= opset)
        .max_by_key(|d| d.since)
    {
        return Ok(d);
    }
    match versions().map(|d| d.since).min() {
        Some(first) => Err(Unsupported::BeforeFirstVersion {
            op_type: op_type.to_string(),
            domain: domain.to_string(),
            first,
            opset,
        }),
        None => Err(Unsupported::Unknown {
            op_type: op_type.to_string(),
            domain: domain.to_string(),
        }),
    }
}

/// Whether a node of this operator gives the same outputs for the same
/// inputs, in every version; unknown operators count as deterministic
/// (they cannot run).
pub fn is_deterministic(domain: &str, op_type: &str) -> bool {
    let domain = canonical_domain(domain);
    tables::all()
        .filter(|d| d.domain == domain && d.op_type == op_type)
        .all(|d| d.deterministic)
}

/// Every operator in the table.
pub fn all() -> impl Iterator<Item = &'static OpDef> {
    tables::all()
}

/// The operators of the manipulation, index and reduction families, fed
/// odd inputs by the robustness tests of their kernels and shape rules.
#[cfg(test)]
pub(crate) const ODD_INPUT_OPS: &[&str] = &[
    "Reshape",
    "Transpose",
    "Concat",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Split",
    "Slice",
    "Expand",
    "Tile",
    "Pad",
    "Shape",
    "Size",
    "ConstantOfShape",
    "Range",
    "Trilu",
    "EyeLike",
    "CumSum",
    "ReverseSequence",
    "DepthToSpace",
    "SpaceToDepth",
    "Gather",
    "GatherElements",
    "GatherND",
    "ScatterElements",
    "Scatter",
    "ScatterND",
    "OneHot",
    "Compress",
    "NonZero",
    "Unique",
    "TopK",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
    "ArgMax",
    "ArgMin",
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_operator_has_one_entry_per_version() {
        let mut seen = HashSet::new();
        let dups: Vec<String> = all()
            .filter(|d| !seen.insert((d.domain, d.op_type, d.since)))
            .map(|d| format!("{}::{} since {}", d.domain, d.op_type, d.since))
            .collect();
        assert!(dups.is_empty(), "duplicate table entries: {dups:?}");
    }

    #[test]
    fn lookup_normalises_the_default_domain() {
        assert!(lookup("ai.onnx", "Add", 18).is_some());
        assert!(lookup("", "Add", 18).is_some());
        assert!(lookup("", "NoSuchOp", 18).is_none());
    }

    #[test]
    fn an_unsupported_version_is_refused_by_name() {
        let e = resolve("", "Gelu", 18).unwrap_err();
        assert_eq!(
            e.to_string(),
            "operator 'Gelu' of domain 'ai.onnx' first appears in opset 20; the model imports opset 18"
        );
        let e = resolve("ai.onnx", "Relu", 29).unwrap_err();
        assert!(
            matches!(e, Unsupported::NewerOpset { newest: 28, .. }),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("opset 29 of domain 'ai.onnx', newer than 28"),
            "{e}"
        );
        let e = resolve("ai.onnx.ml", "NoSuchOp", 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "operator 'NoSuchOp' of domain 'ai.onnx.ml' is not implemented"
        );
        // a converter's own domain has no newest opset
        assert!(matches!(
            resolve("com.example", "Relu", 99),
            Err(Unsupported::Unknown { .. })
        ));
        assert_eq!(resolve("", "Gelu", 20).unwrap().since, 20);
        assert_eq!(resolve("", "Relu", 28).unwrap().op_type, "Relu");
    }
}
