//! Typed access to a node's attributes, shared by shape rules and kernels.

use crate::proto::{AttributeProto, GraphProto, NodeProto, TensorProto};

/// A node's attributes, looked up by name.
#[derive(Clone, Copy)]
pub struct Attrs<'a> {
    list: &'a [AttributeProto],
}

impl<'a> Attrs<'a> {
    pub fn new(node: &'a NodeProto) -> Self {
        Attrs {
            list: &node.attribute,
        }
    }

    pub fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        self.list.iter().find(|a| a.name() == name)
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).map(|a| a.i())
    }

    pub fn int_or(&self, name: &str, default: i64) -> i64 {
        self.int(name).unwrap_or(default)
    }

    pub fn float(&self, name: &str) -> Option<f32> {
        self.get(name).map(|a| a.f())
    }

    pub fn float_or(&self, name: &str, default: f32) -> f32 {
        self.float(name).unwrap_or(default)
    }

    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.get(name).map(|a| a.ints.clone())
    }

    pub fn floats(&self, name: &str) -> Option<Vec<f32>> {
        self.get(name).map(|a| a.floats.clone())
    }

    pub fn string(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|a| String::from_utf8_lossy(a.s()).into_owned())
    }

    pub fn string_or(&self, name: &str, default: &str) -> String {
        self.string(name).unwrap_or_else(|| default.to_string())
    }

    pub fn strings(&self, name: &str) -> Option<Vec<String>> {
        self.get(name).map(|a| {
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
    }

    pub fn tensor(&self, name: &str) -> Option<&'a TensorProto> {
        self.get(name).and_then(|a| a.t.as_ref())
    }

    pub fn graph(&self, name: &str) -> Option<&'a GraphProto> {
        self.get(name).and_then(|a| a.g.as_ref())
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a AttributeProto> {
        self.list.iter()
    }
}
