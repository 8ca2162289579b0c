//! Weights in external data are used in place: the plan's initializers
//! point into the mapped data file (no owned copy), kernels read them there,
//! and weights that cannot be used in place (misaligned, typed fields,
//! small) are copied and counted as owned.

use crate::common;

use common::TempDir;

use onnx_light::proto::{
    load_model, save_model, ExternalOptions, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TypeProto, ValueInfoProto,
};
use onnx_light::runtime::{Plan, RunOptions};
use onnx_light::tensor::{Tensor, Value};
use std::collections::HashMap;
use std::path::Path;

/// `n` floats 0, 0.5, 1, ... as raw little-endian bytes.
fn ramp(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect()
}

fn float_value(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(onnx_light::proto::type_proto::Value::TensorType(
                onnx_light::proto::type_proto::Tensor {
                    elem_type: Some(1),
                    shape: None,
                },
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `y = ReduceSum(w) + x` over a weight `w` of `n` floats.
fn reduce_model(w: TensorProto) -> ModelProto {
    let node = |op: &str, ins: &[&str], out: &str| NodeProto {
        op_type: Some(op.into()),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(18),
        }],
        graph: Some(GraphProto {
            name: Some("g".into()),
            node: vec![
                node("ReduceSum", &["w"], "s"),
                node("Add", &["s", "x"], "y"),
            ],
            input: vec![float_value("x")],
            output: vec![float_value("y")],
            initializer: vec![w],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn run_y(plan: &Plan) -> f32 {
    let feed = HashMap::from([("x".to_string(), Value::Tensor(Tensor::scalar(1.0f32)))]);
    let r = plan
        .run(feed, &RunOptions::default())
        .expect("the model runs");
    match &r.outputs[0].1 {
        Value::Tensor(Tensor::F32(a)) => a.iter().copied().next().expect("one value"),
        other => panic!("expected a float tensor, got {}", other.describe()),
    }
}

/// Sum of 0, 0.5, ..., (n-1)/2, plus 1.
fn expected(n: usize) -> f32 {
    (n as f64 * (n as f64 - 1.0) / 4.0 + 1.0) as f32
}

const N: usize = 1 << 18; // 1 MiB of floats

/// Saves the reduce model over a ramp of N floats at `path`, the weight in
/// `PATH.data` (64-byte aligned).
fn save_with_external_weight(path: &Path) {
    let w = TensorProto {
        name: Some("w".into()),
        dims: vec![N as i64],
        data_type: Some(1),
        raw_data: Some(ramp(N).into()),
        ..Default::default()
    };
    let opts = ExternalOptions {
        threshold: Some(1024),
        ..Default::default()
    };
    save_model(&reduce_model(w), path, &opts).expect("saved with external data");
}

#[test]
fn external_weights_are_used_in_place() {
    let dir = TempDir::new("zero-copy", "aligned");
    let path = dir.path().join("m.onnx");
    save_with_external_weight(&path);
    let model = load_model(&path).expect("loads");
    let plan = Plan::new(&model).expect("plans");
    let (mapped, owned) = plan.weight_bytes();
    assert_eq!(mapped, N * 4, "the weight is the data file's bytes");
    assert_eq!(owned, 0);
    assert_eq!(run_y(&plan), expected(N));
    // a second plan of the same model shares the same bytes
    let again = Plan::new(&model).expect("plans");
    assert_eq!(again.weight_bytes(), (N * 4, 0));
    drop(plan);
    assert_eq!(run_y(&again), expected(N));
    drop(again);
    drop(model);
}

#[test]
fn misaligned_external_weights_are_copied() {
    let dir = TempDir::new("zero-copy", "misaligned");
    let path = dir.path().join("m.onnx");
    // the weight starts 2 bytes into its data file: no f32 can be read there
    let mut data = vec![0u8, 0];
    data.extend(ramp(N));
    std::fs::write(dir.path().join("w.bin"), &data).expect("data file written");
    let kv = |k: &str, v: String| StringStringEntryProto {
        key: Some(k.into()),
        value: Some(v),
    };
    let w = TensorProto {
        name: Some("w".into()),
        dims: vec![N as i64],
        data_type: Some(1),
        data_location: Some(1),
        external_data: vec![
            kv("location", "w.bin".into()),
            kv("offset", "2".into()),
            kv("length", (N * 4).to_string()),
        ],
        ..Default::default()
    };
    save_model(&reduce_model(w), &path, &ExternalOptions::default()).expect("saved");
    let model = load_model(&path).expect("loads");
    let plan = Plan::new(&model).expect("plans");
    assert_eq!(plan.weight_bytes(), (0, N * 4), "copied, counted as owned");
    assert_eq!(run_y(&plan), expected(N));
}

#[test]
fn typed_and_small_weights_are_owned() {
    let w = TensorProto {
        name: Some("w".into()),
        dims: vec![4],
        data_type: Some(1),
        float_data: vec![1.0, 2.0, 3.0, 4.0],
        ..Default::default()
    };
    let plan = Plan::new(&reduce_model(w)).expect("plans");
    assert_eq!(plan.weight_bytes(), (0, 16));
    assert_eq!(run_y(&plan), 11.0);
}

#[test]
fn memory_reports_mapped_and_owned_weights() {
    let dir = TempDir::new("zero-copy", "memory");
    let path = dir.path().join("m.onnx");
    save_with_external_weight(&path);
    let o = common::cmds(&format!(
        "load {}; run x=1.5; memory --format json; memory",
        path.display()
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let at = o.stdout.rfind("{\n  \"peak_bytes\"").expect("json");
    let end = o.stdout[at..].find("\n}").expect("json end") + at + 2;
    let v: serde_json::Value = serde_json::from_str(&o.stdout[at..end]).unwrap();
    assert_eq!(v["weights"]["mapped_bytes"], N * 4, "{v}");
    assert_eq!(v["weights"]["owned_bytes"], 0, "{v}");
    assert!(
        o.stdout
            .contains("weights 1.0 MiB used in place from the model's files, 0 B copied"),
        "{}",
        o.stdout
    );
}
