//! Binary model I/O benchmark helper.
//!
//! - `bench_io gen DIR [MIB] [TENSORS]`: writes `DIR/big.onnx` with TENSORS
//!   float initializers totalling MIB MiB (defaults 1024 and 4), saved by
//!   onnx-light with external data (`DIR/big.onnx.data`).
//! - `bench_io load PATH`: times `load_model` and prints `load_s SECONDS`
//!   and the number of bytes of tensor data loaded.

use onnx_light::proto::{
    load_model, save_model, ExternalOptions, GraphProto, ModelProto, OperatorSetIdProto,
    TensorProto, TypeProto, ValueInfoProto,
};
use std::path::Path;
use std::time::Instant;

fn gen(dir: &Path, mib: usize, count: usize) {
    std::fs::create_dir_all(dir).expect("the output folder is created");
    let per = mib * (1 << 20) / count / 4;
    let mut graph = GraphProto {
        name: Some("big".into()),
        ..Default::default()
    };
    for k in 0..count {
        let name = format!("w{k}");
        let raw: Vec<u8> = (0..per)
            .flat_map(|i| ((i % 1000) as f32 * 0.001 + k as f32).to_le_bytes())
            .collect();
        graph.initializer.push(TensorProto {
            name: Some(name.clone()),
            dims: vec![per as i64],
            data_type: Some(1),
            raw_data: Some(raw.into()),
            ..Default::default()
        });
        let vi = |n: &str| {
            ValueInfoProto {
            name: Some(n.into()),
            r#type: Some(TypeProto {
                value: Some(onnx_light::proto::type_proto::Value::TensorType(
                    onnx_light::proto::type_proto::Tensor {
                        elem_type: Some(1),
                        shape: Some(onnx_light::proto::TensorShapeProto {
                            dim: vec![onnx_light::proto::tensor_shape_proto::Dimension {
                                value: Some(
                                    onnx_light::proto::tensor_shape_proto::dimension::Value::DimValue(
                                        per as i64,
                                    ),
                                ),
                                denotation: None,
                            }],
                        }),
                    },
                )),
                denotation: None,
            }),
            ..Default::default()
        }
        };
        graph.node.push(onnx_light::proto::NodeProto {
            op_type: Some("Identity".into()),
            input: vec![name.clone()],
            output: vec![format!("y{k}")],
            ..Default::default()
        });
        graph.output.push(vi(&format!("y{k}")));
    }
    let model = ModelProto {
        ir_version: Some(10),
        producer_name: Some("onnx-light bench_io".into()),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(graph),
        ..Default::default()
    };
    let t = Instant::now();
    let opts = ExternalOptions {
        threshold: Some(1024),
        ..Default::default()
    };
    save_model(&model, &dir.join("big.onnx"), &opts).expect("the big model is saved");
    println!("save_s {:.4}", t.elapsed().as_secs_f64());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") if args.len() >= 2 => {
            let mib = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1024);
            let count = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(4);
            gen(Path::new(&args[1]), mib, count);
        }
        Some("load") if args.len() == 2 || (args.len() == 3 && args[2] == "--read") => {
            let t = Instant::now();
            let model = load_model(Path::new(&args[1])).expect("the model loads");
            let secs = t.elapsed().as_secs_f64();
            let inits: Vec<_> = model.graph.iter().flat_map(|g| &g.initializer).collect();
            let bytes: usize = inits
                .iter()
                .map(|t| t.raw_data.as_ref().map_or(0, |r| r.len()))
                .sum();
            if args.len() == 3 {
                // every initializer decoded to a tensor, as the runtime does
                let tensors: Vec<_> = inits
                    .iter()
                    .map(|t| onnx_light::proto::from_proto(t).expect("the tensor decodes"))
                    .collect();
                println!("load_read_s {:.4}", t.elapsed().as_secs_f64());
                println!("tensors {}", tensors.len());
            } else {
                println!("load_s {secs:.4}");
            }
            println!("bytes {bytes}");
        }
        _ => {
            eprintln!("usage: bench_io gen DIR [MIB] [TENSORS] | bench_io load PATH [--read]");
            std::process::exit(2);
        }
    }
}
