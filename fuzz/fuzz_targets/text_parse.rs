//! Text as ONNX text syntax: parsing, then (when it parses) printing,
//! re-parsing the printed form and shape inference.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_light::{shape, tensor::budget, text};

fuzz_target!(|data: &[u8]| {
    budget::set_limit(Some(256 << 20));
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut model) = text::parse_model(src) else {
        return;
    };
    let printed = text::print_model(&model);
    let _ = text::parse_model(&printed);
    let _ = shape::infer_model(&mut model);
});
