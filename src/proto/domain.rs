//! The one place that knows the default ONNX domain has two spellings.
//!
//! A model may name the default operator set `""` or `"ai.onnx"`; both are
//! the same domain. Everything that compares, stores or looks up a domain
//! goes through [`canonical_domain`], and everything that shows one to the
//! user goes through [`display_domain`].

/// The name the ONNX standard gives the default domain in messages.
const DEFAULT_DOMAIN_NAME: &str = "ai.onnx";

/// The canonical spelling of a domain: the default domain is `""`, every
/// other domain is returned unchanged.
pub fn canonical_domain(domain: &str) -> &str {
    if domain == DEFAULT_DOMAIN_NAME {
        ""
    } else {
        domain
    }
}

/// The spelling of a domain for messages: the default domain is shown as
/// `ai.onnx`, every other domain unchanged.
pub fn display_domain(domain: &str) -> &str {
    if domain.is_empty() {
        DEFAULT_DOMAIN_NAME
    } else {
        domain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_of_the_default_domain_are_one() {
        assert_eq!(canonical_domain("ai.onnx"), "");
        assert_eq!(canonical_domain(""), "");
        assert_eq!(canonical_domain("ai.onnx.ml"), "ai.onnx.ml");
        assert_eq!(canonical_domain("com.microsoft"), "com.microsoft");
        assert_eq!(display_domain(""), "ai.onnx");
        assert_eq!(display_domain("ai.onnx.ml"), "ai.onnx.ml");
    }
}
