//! Generates the ONNX protobuf types from `proto/onnx.proto` with prost.
//! `protox` compiles the schema in-process, so no system `protoc` is needed.

fn main() {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let fds = protox::compile(["proto/onnx.proto"], ["proto"]).expect("proto/onnx.proto compiles");
    // raw_data as `bytes::Bytes`: a loaded tensor's bytes are a zero-copy
    // slice of the model file or of a memory-mapped external data file.
    prost_build::Config::new()
        .bytes([".onnx.TensorProto.raw_data"])
        .compile_fds(fds)
        .expect("prost generates the ONNX types");
}
