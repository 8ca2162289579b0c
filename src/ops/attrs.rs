//! Typed access to a node's attributes, shared by shape rules and kernels.

use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, NodeProto, TensorProto};
use std::cell::Cell;

/// An attribute that is present with another type than the operator expects.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("attribute '{name}' must be {expected}, got {found}")]
pub struct AttrTypeError {
    pub name: String,
    pub expected: &'static str,
    pub found: &'static str,
}

fn type_name(t: AttributeType) -> &'static str {
    match t {
        AttributeType::Undefined => "UNDEFINED",
        AttributeType::Float => "FLOAT",
        AttributeType::Int => "INT",
        AttributeType::String => "STRING",
        AttributeType::Tensor => "TENSOR",
        AttributeType::Graph => "GRAPH",
        AttributeType::Floats => "FLOATS",
        AttributeType::Ints => "INTS",
        AttributeType::Strings => "STRINGS",
        AttributeType::Tensors => "TENSORS",
        AttributeType::Graphs => "GRAPHS",
        AttributeType::SparseTensor => "SPARSE_TENSOR",
        AttributeType::SparseTensors => "SPARSE_TENSORS",
        AttributeType::TypeProto => "TYPE_PROTO",
        AttributeType::TypeProtos => "TYPE_PROTOS",
    }
}

/// The attribute's declared type; for a producer that left it unset, the
/// type its filled fields imply (an empty list counts as any list type).
fn declared_type(a: &AttributeProto) -> Option<AttributeType> {
    match a.r#type.and_then(|t| AttributeType::try_from(t).ok()) {
        Some(AttributeType::Undefined) | None => {
            if a.t.is_some() {
                Some(AttributeType::Tensor)
            } else if a.g.is_some() {
                Some(AttributeType::Graph)
            } else if !a.floats.is_empty() {
                Some(AttributeType::Floats)
            } else if !a.ints.is_empty() {
                Some(AttributeType::Ints)
            } else if !a.strings.is_empty() {
                Some(AttributeType::Strings)
            } else if a.s.is_some() {
                Some(AttributeType::String)
            } else if a.f.is_some() {
                Some(AttributeType::Float)
            } else if a.i.is_some() {
                Some(AttributeType::Int)
            } else {
                None
            }
        }
        t => t,
    }
}

/// A node's attributes, looked up by name.
///
/// Every typed getter checks the attribute's type: one of another type
/// reads as absent, and with [`Attrs::recording`] the first such mismatch
/// is kept for the caller (the plan and the shape engine), which refuses the
/// node naming the attribute, the type expected and the type found.
#[derive(Clone, Copy)]
pub struct Attrs<'a> {
    list: &'a [AttributeProto],
    mistyped: Option<&'a Cell<Option<AttrTypeError>>>,
}

impl<'a> Attrs<'a> {
    pub fn new(node: &'a NodeProto) -> Self {
        Attrs {
            list: &node.attribute,
            mistyped: None,
        }
    }

    /// Like [`Attrs::new`], keeping in `slot` the first attribute read
    /// with another type than it has.
    pub fn recording(node: &'a NodeProto, slot: &'a Cell<Option<AttrTypeError>>) -> Self {
        Attrs {
            list: &node.attribute,
            mistyped: Some(slot),
        }
    }

    /// The attribute when present with type `want`; otherwise `None`, and a
    /// mismatch is recorded.
    fn typed(&self, name: &str, want: AttributeType) -> Option<&'a AttributeProto> {
        match self.checked(name, want) {
            Ok(a) => a,
            Err(e) => {
                if let Some(slot) = self.mistyped {
                    let first = slot.take().unwrap_or(e);
                    slot.set(Some(first));
                }
                None
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        self.list.iter().find(|a| a.name() == name)
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.typed(name, AttributeType::Int).map(|a| a.i())
    }

    pub fn int_or(&self, name: &str, default: i64) -> i64 {
        self.int(name).unwrap_or(default)
    }

    pub fn float(&self, name: &str) -> Option<f32> {
        self.typed(name, AttributeType::Float).map(|a| a.f())
    }

    pub fn float_or(&self, name: &str, default: f32) -> f32 {
        self.float(name).unwrap_or(default)
    }

    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.typed(name, AttributeType::Ints)
            .map(|a| a.ints.clone())
    }

    pub fn floats(&self, name: &str) -> Option<Vec<f32>> {
        self.typed(name, AttributeType::Floats)
            .map(|a| a.floats.clone())
    }

    pub fn string(&self, name: &str) -> Option<String> {
        self.typed(name, AttributeType::String)
            .map(|a| String::from_utf8_lossy(a.s()).into_owned())
    }

    pub fn string_or(&self, name: &str, default: &str) -> String {
        self.string(name).unwrap_or_else(|| default.to_string())
    }

    pub fn strings(&self, name: &str) -> Option<Vec<String>> {
        self.typed(name, AttributeType::Strings).map(|a| {
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
    }

    pub fn tensor(&self, name: &str) -> Option<&'a TensorProto> {
        self.typed(name, AttributeType::Tensor)
            .and_then(|a| a.t.as_ref())
    }

    pub fn graph(&self, name: &str) -> Option<&'a GraphProto> {
        self.typed(name, AttributeType::Graph)
            .and_then(|a| a.g.as_ref())
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a AttributeProto> {
        self.list.iter()
    }

    /// The attribute when present, checked to be of type `want`: typed
    /// decoding (`*_checked`) refuses an attribute of another type by name
    /// instead of reading a default out of it.
    fn checked(
        &self,
        name: &str,
        want: AttributeType,
    ) -> Result<Option<&'a AttributeProto>, AttrTypeError> {
        let Some(a) = self.get(name) else {
            return Ok(None);
        };
        match declared_type(a) {
            Some(t) if t == want => Ok(Some(a)),
            // An empty list of unset type fits any list type.
            None if matches!(
                want,
                AttributeType::Ints | AttributeType::Floats | AttributeType::Strings
            ) =>
            {
                Ok(Some(a))
            }
            found => Err(AttrTypeError {
                name: name.to_string(),
                expected: type_name(want),
                found: found.map_or("nothing", type_name),
            }),
        }
    }

    pub fn int_checked(&self, name: &str) -> Result<Option<i64>, AttrTypeError> {
        Ok(self.checked(name, AttributeType::Int)?.map(|a| a.i()))
    }

    pub fn float_checked(&self, name: &str) -> Result<Option<f32>, AttrTypeError> {
        Ok(self.checked(name, AttributeType::Float)?.map(|a| a.f()))
    }

    pub fn string_checked(&self, name: &str) -> Result<Option<String>, AttrTypeError> {
        Ok(self
            .checked(name, AttributeType::String)?
            .map(|a| String::from_utf8_lossy(a.s()).into_owned()))
    }

    pub fn ints_checked(&self, name: &str) -> Result<Option<Vec<i64>>, AttrTypeError> {
        Ok(self
            .checked(name, AttributeType::Ints)?
            .map(|a| a.ints.clone()))
    }

    pub fn floats_checked(&self, name: &str) -> Result<Option<Vec<f32>>, AttrTypeError> {
        Ok(self
            .checked(name, AttributeType::Floats)?
            .map(|a| a.floats.clone()))
    }

    /// A FLOATS attribute widened to f64 (the ML kernels compute in f64).
    pub fn floats_f64_checked(&self, name: &str) -> Result<Option<Vec<f64>>, AttrTypeError> {
        Ok(self
            .floats_checked(name)?
            .map(|v| v.into_iter().map(f64::from).collect()))
    }

    pub fn strings_checked(&self, name: &str) -> Result<Option<Vec<String>>, AttrTypeError> {
        Ok(self.checked(name, AttributeType::Strings)?.map(|a| {
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        }))
    }

    pub fn tensor_checked(&self, name: &str) -> Result<Option<&'a TensorProto>, AttrTypeError> {
        Ok(self
            .checked(name, AttributeType::Tensor)?
            .and_then(|a| a.t.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(attrs: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            attribute: attrs,
            ..Default::default()
        }
    }

    #[test]
    fn checked_access_refuses_another_type_by_name() {
        let n = node(vec![AttributeProto {
            name: Some("alpha".into()),
            f: Some(0.5),
            r#type: Some(AttributeType::Float as i32),
            ..Default::default()
        }]);
        let a = Attrs::new(&n);
        assert_eq!(a.float_checked("alpha"), Ok(Some(0.5)));
        let e = a.int_checked("alpha").unwrap_err();
        assert_eq!(e.to_string(), "attribute 'alpha' must be INT, got FLOAT");
        assert_eq!(a.int_checked("beta"), Ok(None));
    }

    #[test]
    fn a_mistyped_read_is_absent_and_the_first_is_recorded() {
        let n = node(vec![
            AttributeProto {
                name: Some("alpha".into()),
                i: Some(2),
                r#type: Some(AttributeType::Int as i32),
                ..Default::default()
            },
            AttributeProto {
                name: Some("strides".into()),
                floats: vec![2.0],
                r#type: Some(AttributeType::Floats as i32),
                ..Default::default()
            },
        ]);
        let slot = Cell::new(None);
        let a = Attrs::recording(&n, &slot);
        assert_eq!(a.int("alpha"), Some(2));
        assert_eq!(a.float("alpha"), None);
        assert_eq!(a.ints("strides"), None);
        assert_eq!(
            slot.take().map(|e| e.to_string()),
            Some("attribute 'alpha' must be FLOAT, got INT".to_string())
        );
        // without a slot the mismatch still reads as absent
        assert_eq!(Attrs::new(&n).float("alpha"), None);
    }

    #[test]
    fn an_untyped_attribute_is_typed_by_its_fields() {
        let n = node(vec![
            AttributeProto {
                name: Some("axes".into()),
                ints: vec![1, 2],
                ..Default::default()
            },
            AttributeProto {
                name: Some("empty".into()),
                ..Default::default()
            },
        ]);
        let a = Attrs::new(&n);
        assert_eq!(a.ints_checked("axes"), Ok(Some(vec![1, 2])));
        assert!(a.floats_checked("axes").is_err());
        assert_eq!(a.floats_checked("empty"), Ok(Some(vec![])));
    }
}
