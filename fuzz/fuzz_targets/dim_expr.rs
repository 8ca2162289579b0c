//! Text as a dimension expression: parsing, printing, simplifying and
//! evaluating with a few bindings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_light::expr::{Bindings, Expr};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(e) = Expr::parse(src) else {
        return;
    };
    let printed = e.to_string();
    let _ = Expr::parse(&printed);
    let s = e.simplify();
    let _ = s.to_string();
    let mut b = Bindings::new();
    for (i, sym) in e.symbols().into_iter().enumerate() {
        b.insert(sym, [3, -2, 0, i64::MAX, i64::MIN, 1][i % 6]);
    }
    let _ = e.eval(&b);
    let _ = s.eval(&b);
});
