//! Test helpers: build and run one kernel with given attributes and inputs,
//! by its builder or by its operator name.

use crate::ops::kernel::{KernelBuilder, KernelError, NodeInfo, RunCtx};
use crate::ops::Attrs;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, NodeProto};
use crate::tensor::{Elem, Tensor, Value};

#[allow(dead_code)] // kept for attribute-form tests
pub fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

pub fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

pub fn string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    }
}

/// Runs `b` on the inputs (`None` = absent) with `n_out` outputs.
pub fn run(
    b: KernelBuilder,
    opset: i64,
    attrs: Vec<AttributeProto>,
    ins: Vec<Option<Tensor>>,
    n_out: usize,
) -> Result<Vec<Tensor>, KernelError> {
    let node = NodeProto {
        attribute: attrs,
        output: (0..n_out).map(|i| format!("y{i}")).collect(),
        ..Default::default()
    };
    let compile = |_: &crate::proto::GraphProto| Err(KernelError::new("no subgraphs"));
    let info = NodeInfo {
        node: &node,
        opset,
        attrs: Attrs::new(&node),
        compile: &compile,
    };
    let k = b(&info)?;
    let vals: Vec<Option<Value>> = ins.into_iter().map(|t| t.map(Value::Tensor)).collect();
    let refs: Vec<Option<&Value>> = vals.iter().map(|v| v.as_ref()).collect();
    let mut runner = |_: &dyn crate::ops::kernel::Subgraph, _: Vec<(String, Value)>| {
        Err(KernelError::new("no subgraphs"))
    };
    let mut cx = RunCtx {
        runner: &mut runner,
        parts: None,
    };
    Ok(k(&mut cx, &refs)?
        .into_iter()
        .filter_map(|v| v.into_tensor())
        .collect())
}

pub fn i64s(shape: &[usize], v: Vec<i64>) -> Tensor {
    Tensor::from_vec(shape, v).expect("test tensor")
}

/// A tensor of any element type (panics on a shape mismatch: tests only).
pub fn tensor<T: Elem>(shape: &[usize], v: Vec<T>) -> Tensor {
    Tensor::from_vec(shape, v).expect("test tensor")
}

/// Runs the ai.onnx operator `op` (looked up in the tables at `opset`) on
/// the inputs, returning its first output.
pub fn run_op(
    op: &str,
    attrs: Vec<AttributeProto>,
    opset: i64,
    ins: &[Option<Tensor>],
) -> Result<Tensor, KernelError> {
    let def = crate::ops::lookup("", op, opset)
        .ok_or_else(|| KernelError::new(format!("{op} is not in the tables at opset {opset}")))?;
    run(def.kernel, opset, attrs, ins.to_vec(), 1)?
        .into_iter()
        .next()
        .ok_or_else(|| KernelError::new(format!("{op} gave no tensor output")))
}
