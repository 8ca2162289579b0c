//! Generates the ONNX protobuf types from `proto/onnx.proto` with prost.
//! `protox` compiles the schema in-process, so no system `protoc` is needed.

fn main() {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let fds = protox::compile(["proto/onnx.proto"], ["proto"]).expect("proto/onnx.proto compiles");
    prost_build::Config::new()
        .compile_fds(fds)
        .expect("prost generates the ONNX types");
}
