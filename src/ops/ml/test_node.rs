//! Test support: runs one `ai.onnx.ml` node through its table entry.

use crate::ops::kernel::{NodeInfo, RunCtx};
use crate::ops::Attrs;
use crate::ops::KernelError;
use crate::proto::{AttributeProto, NodeProto};
use crate::tensor::{Tensor, Value};

pub fn floats(name: &str, v: &[f32]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        floats: v.to_vec(),
        r#type: Some(6),
        ..Default::default()
    }
}

pub fn float(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        f: Some(v),
        r#type: Some(1),
        ..Default::default()
    }
}

pub fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        ints: v.to_vec(),
        r#type: Some(7),
        ..Default::default()
    }
}

pub fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(v),
        r#type: Some(2),
        ..Default::default()
    }
}

pub fn string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        s: Some(v.as_bytes().to_vec()),
        r#type: Some(3),
        ..Default::default()
    }
}

pub fn strings(name: &str, v: &[&str]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        strings: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
        r#type: Some(8),
        ..Default::default()
    }
}

/// Builds the kernel of `op` (latest ai.onnx.ml version) with `attrs` and
/// runs it on `ins`; an error is returned as its message.
pub fn run(op: &str, attrs: Vec<AttributeProto>, ins: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
    let node = NodeProto {
        op_type: Some(op.into()),
        domain: Some("ai.onnx.ml".into()),
        attribute: attrs,
        ..Default::default()
    };
    let compile = |_: &crate::proto::GraphProto| -> Result<std::sync::Arc<dyn crate::ops::kernel::Subgraph>, KernelError> {
        Err(KernelError::new("no subgraphs"))
    };
    let info = NodeInfo {
        node: &node,
        opset: 5,
        attrs: Attrs::new(&node),
        compile: &compile,
    };
    let def = crate::ops::lookup("ai.onnx.ml", op, 5).ok_or("op not in table")?;
    let builder = def.kernel;
    let kernel = builder(&info).map_err(|e| e.to_string())?;
    let vals: Vec<Option<Value>> = ins.into_iter().map(|t| Some(Value::Tensor(t))).collect();
    let refs: Vec<Option<&Value>> = vals.iter().map(|v| v.as_ref()).collect();
    let mut runner =
        |_: &dyn crate::ops::kernel::Subgraph,
         _: Vec<(String, Value)>|
         -> Result<Vec<Value>, KernelError> { Err(KernelError::new("no subgraphs")) };
    let mut cx = RunCtx {
        runner: &mut runner,
        parts: None,
    };
    let out = kernel(&mut cx, &refs).map_err(|e| e.to_string())?;
    out.into_iter()
        .map(|v| v.into_tensor().ok_or_else(|| "not a tensor".to_string()))
        .collect()
}
