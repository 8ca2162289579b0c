//! The operator-set version each domain of a model resolves to.

use crate::proto::{canonical_domain, OperatorSetIdProto};
use std::collections::BTreeMap;

/// Domain (canonical spelling: the default domain is `""`) to imported
/// version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opsets(BTreeMap<String, i64>);

impl Opsets {
    /// The versions a model or function imports. A domain imported twice
    /// keeps its last version.
    pub fn from_imports(list: &[OperatorSetIdProto]) -> Opsets {
        let mut o = Opsets::default();
        o.import(list);
        o
    }

    /// Imports `list` over these versions (a function's own imports win
    /// inside its body).
    pub fn import(&mut self, list: &[OperatorSetIdProto]) {
        for i in list {
            self.0
                .insert(canonical_domain(i.domain()).to_string(), i.version());
        }
    }

    /// Adds the domains of `list` that are not imported yet (a model's
    /// imports win over those of the functions it defines).
    pub fn import_missing(&mut self, list: &[OperatorSetIdProto]) {
        for i in list {
            self.0
                .entry(canonical_domain(i.domain()).to_string())
                .or_insert(i.version());
        }
    }

    /// The version `domain` resolves to (either spelling of the default
    /// domain).
    pub fn get(&self, domain: &str) -> Option<i64> {
        self.0.get(canonical_domain(domain)).copied()
    }

    /// The version of the default domain, 0 when not imported.
    pub fn default_domain(&self) -> i64 {
        self.get("").unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp(domain: &str, version: i64) -> OperatorSetIdProto {
        OperatorSetIdProto {
            domain: Some(domain.into()),
            version: Some(version),
        }
    }

    #[test]
    fn both_spellings_of_the_default_domain_are_one() {
        let o = Opsets::from_imports(&[imp("ai.onnx", 13), imp("ai.onnx.ml", 3)]);
        assert_eq!(o.get(""), Some(13));
        assert_eq!(o.get("ai.onnx"), Some(13));
        assert_eq!(o.get("ai.onnx.ml"), Some(3));
        assert_eq!(o.get("com.microsoft"), None);
        assert_eq!(o.default_domain(), 13);
    }

    #[test]
    fn import_overrides_and_import_missing_does_not() {
        let mut o = Opsets::from_imports(&[imp("", 13)]);
        o.import_missing(&[imp("", 18), imp("custom", 1)]);
        assert_eq!((o.get(""), o.get("custom")), (Some(13), Some(1)));
        o.import(&[imp("", 18)]);
        assert_eq!(o.get(""), Some(18));
    }
}
