//! Bytes as a `.onnx` file: decoding, then (when it decodes) shape
//! inference, the text printer and a re-parse of what it printed must end
//! in a value or an error, never a panic, abort or stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_light::{proto, shape, tensor::budget, text};

fuzz_target!(|data: &[u8]| {
    budget::set_limit(Some(256 << 20));
    let Ok(model) = proto::decode_model(data) else {
        return;
    };
    let _ = shape::infer_model(&mut model.clone());
    let printed = text::print_model(&model);
    let _ = text::parse_model(&printed);
    let _ = text::pretty(&model);
});
