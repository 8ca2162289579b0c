use super::*;

const SEED: &str = r#"<ir_version: 10, opset_import: ["" : 18]>
agraph (float[N,4] x) => (float[M,2] y)
<float two = {2.0}, int64[2] target_shape = {-1, 2}>
{
  z = Mul(x, two)
  w = Add(z, x)
  y = Reshape(w, target_shape)
}
"#;

#[test]
fn seed_pretty() {
    let m = parse_model(SEED).unwrap();
    let expected = "opset: domain='' version=18
graph: name='agraph'
input: float[N,4] x
init: float[] two
init: int64[2] target_shape
0: Mul(x, two) -> z
1: Add(z, x) -> w
2: Reshape(w, target_shape) -> y
output: float[M,2] y
";
    assert_eq!(pretty(&m), expected);
}

#[test]
fn seed_fields() {
    let m = parse_model(SEED).unwrap();
    assert_eq!(m.ir_version, Some(10));
    let g = m.graph.as_ref().unwrap();
    assert_eq!(g.node.len(), 3);
    assert_eq!(g.node[0].domain.as_deref(), Some(""));
    assert_eq!(g.initializer[1].int64_data, vec![-1, 2]);
    assert_eq!(g.initializer[0].float_data, vec![2.0]);
    assert!(g.initializer[0].dims.is_empty());
}

#[test]
fn round_trip_seed() {
    let m = parse_model(SEED).unwrap();
    let text = print_model(&m);
    assert_eq!(parse_model(&text).unwrap(), m, "{text}");
    assert!(expressible(&m).is_ok());
}

#[test]
fn error_display() {
    let text = "<ir_version: 10, opset_import: [\"\" : 18]>\nagraph (float[N,4] x) => (float[M,2] y)\n{\n  y = Reshape(w, target_shape\n}\n";
    let e = parse_model(text).unwrap_err();
    assert_eq!(e.line, 5);
    let text = "g (float x) => (float y) {\n  y = Reshape(w, target_shape\n}";
    let e = parse_model(text).unwrap_err();
    assert_eq!((e.line, e.col), (3, 1));
    assert!(e.message.contains("')' after the node inputs"), "{e}");
    let e = SyntaxError {
        line: 3,
        col: 12,
        line_text: "y = Reshape(w, target_shape".into(),
        message: "expected ')' after the node inputs".into(),
    };
    assert_eq!(
        e.to_string(),
        "line 3:12: expected ')' after the node inputs\n  y = Reshape(w, target_shape\n             ^"
    );
}

fn err(text: &str) -> SyntaxError {
    match parse_model(text) {
        Ok(m) => panic!("parsed {text:?} into {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn error_messages() {
    let e = err("g (flaot[2] x) => () {}");
    assert_eq!(e.message, "unknown element type 'flaot'");
    assert_eq!((e.line, e.col), (1, 4));
    let e = err("g () => (y) <flaot y> {}");
    assert_eq!(e.message, "unknown element type 'flaot'");
    let e = err("g () => () { y Op(x) }");
    assert!(
        e.message.starts_with("expected '=' after the output names"),
        "{e}"
    );
    let e = err("g () => () { y = Op <a = \"abc> (x) }");
    assert_eq!(e.message, "unterminated string");
    assert_eq!(e.col, 26);
    let e = err("g (float[2 x) => () {}");
    assert!(e.message.contains("']'"), "{e}");
    let e = err("g () => () {} junk");
    assert!(e.message.contains("'('"), "{e}");
    let e = err("g () => () {} )");
    assert!(
        e.message.contains("a function or the end of the text"),
        "{e}"
    );
    let e = err("g () => () { y = Op <a = []> (x) }");
    assert!(e.message.contains("type annotation"), "{e}");
    let e = err("g () => () { y = Op <a = [1, 2.5]> (x) }");
    assert!(e.message.contains("expected a value of type int"), "{e}");
    let e = err("<ir_version: 10, fo: 1> g () => () {}");
    assert!(e.message.contains("unknown model header key 'fo'"), "{e}");
    let e = err("g () => () <float[2] a = {1e40}> {}");
    assert!(e.message.contains("out of the float range"), "{e}");
    let e = err("g () => () <int32[1] a = {2147483648}> {}");
    assert!(e.message.contains("int32 range"), "{e}");
    let e = err("g () => () <string[1] a = {1}> {}");
    assert!(e.message.contains("expected a string"), "{e}");
    let e = err("");
    assert!(e.message.contains("graph name"), "{e}");
    let e = err("g () => () { y = Op (x) <a = 1> <b = 2> }");
    assert!(
        e.message.contains("'}'") || e.message.contains("output"),
        "{e}"
    );
}

#[test]
fn no_panic_on_prefixes() {
    let text = r#"<ir_version: 10, opset_import: ["" : 18, "local": 1], producer_name: "p", metadata_props: ["a": "b"]>
main (float[N,"M+1",?] x, seq(map(int64, float)) s, float c = {1.5}) => (float[N] y, optional(float) o)
<float[2] w = {1.0, nan}, string[1] t = {"a\"b"}, float[3] v>
{
  [n0] y, "" = local.F <alpha: float = 0.5, perm = [1, 0], t = float[2] {1, 2}, g = sub (float a) => (float b) { b = Neg(a) }> (x, , w)  # comment
  o = Op <tp = seq(float[N]), s = "x", fs = [1.0, -inf], e: ints = []> (x)
}
<domain: "local", opset_import: ["" : 18]>
F <alpha, beta = 3> (x, float[N] y) => (z)
<float[2] q>
{
  z = Mul <a = @alpha> (x, y)
}
"#;
    assert!(parse_model(text).is_ok(), "{:?}", parse_model(text).err());
    let mut ok = 0;
    for (i, _) in text.char_indices() {
        if parse_model(&text[..i]).is_ok() {
            ok += 1;
        }
    }
    // A few prefixes end right after a complete function.
    assert!(ok <= 3, "{ok} prefixes parsed");
    // Garbage bytes (as lossy UTF-8) never panic.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for len in 0..400 {
        let mut bytes = Vec::with_capacity(len);
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            bytes.push(seed as u8);
        }
        let s = String::from_utf8_lossy(&bytes);
        let _ = parse_model(&s);
        let _ = parse_graph(&s);
        // Mutations of the valid text.
        let mut b = text.as_bytes().to_vec();
        let at = (seed as usize) % b.len();
        b[at] = b"()<>[]{},=:@\"#.x1-"[(seed >> 20) as usize % 18];
        let s = String::from_utf8_lossy(&b);
        let _ = parse_model(&s);
    }
    let deep = "g () => () { y = Op <a = ".repeat(500);
    assert!(parse_model(&deep).is_err());
    let deep = format!("g ({} x) => () {{}}", "seq(".repeat(1000));
    assert!(parse_model(&deep).is_err());
}

#[test]
fn type_formats() {
    let g = parse_graph(
        "g (float a, float[] b, float[N,?,3] c, seq(float[N]) d, map(int64, float) e, optional(seq(int64)) f, sparse_tensor(float[2,3]) h, opaque(dom, nm) i) => () {}",
    )
    .unwrap();
    let display: Vec<String> = g
        .input
        .iter()
        .map(|v| format_type(v.r#type.as_ref().unwrap()))
        .collect();
    assert_eq!(
        display,
        [
            "float[]",
            "float",
            "float[N,?,3]",
            "seq(float[N])",
            "map(int64, float[])",
            "optional(seq(int64[]))",
            "sparse_tensor(float[2,3])",
            "opaque(dom, nm)"
        ]
    );
    let syntax: Vec<String> = g
        .input
        .iter()
        .map(|v| format_type_syntax(v.r#type.as_ref().unwrap()))
        .collect();
    assert_eq!(syntax[0], "float");
    assert_eq!(syntax[1], "float[]");
    assert_eq!(syntax[4], "map(int64, float)");
}

#[test]
fn floats_round_trip() {
    for v in [
        0.1f32,
        1.0,
        -0.0,
        1e-30,
        3.4028235e38,
        1.4e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        16777216.0,
        123456.79,
    ] {
        let text = format!("g () => () {{ y = Op <a = {}> () }}", print::f32_text(v));
        let g = parse_graph(&text).unwrap();
        assert_eq!(
            g.node[0].attribute[0].f.unwrap().to_bits(),
            v.to_bits(),
            "{text}"
        );
    }
}

/// Lists of tensors, graphs and types keep their values (onnx.parser 1.23
/// drops them, leaving an empty attribute: a known deviation).
#[test]
fn value_lists_kept() {
    let g = parse_graph(
        "g () => () { y = Op <ts = [float[1] {1}, int64[2] k {1, 2}], gs = [a () => () {}, b (float x) => (float y) { y = Neg(x) }], tps = [float, int64[3]]> () }",
    )
    .unwrap();
    let a = &g.node[0].attribute;
    assert_eq!(a[0].tensors.len(), 2);
    assert_eq!(a[0].tensors[1].name.as_deref(), Some("k"));
    assert_eq!(a[0].r#type, Some(AttributeType::Tensors as i32));
    assert_eq!(a[1].graphs.len(), 2);
    assert_eq!(a[1].graphs[1].node.len(), 1);
    assert_eq!(a[2].type_protos.len(), 2);
    let text = print_graph(&g);
    assert_eq!(parse_graph(&text).unwrap(), g, "{text}");
}

use crate::proto::attribute_proto::AttributeType;

#[test]
fn parse_graph_and_trailing_text() {
    assert!(parse_graph("g (float x) => (float y) { y = Relu(x) }").is_ok());
    let e = parse_graph("g (float x) => (float y) { y = Relu(x) } extra").unwrap_err();
    assert!(e.message.contains("end of the text"), "{e}");
    let e =
        parse_model("g () => () {}\n<domain: \"d\"> F (x) => (y) { y = Neg(x) }\n}").unwrap_err();
    assert_eq!(e.line, 3);
    let e = parse_model("g () => () { y = Op <a = 1> (x) <b = 2> }").unwrap_err();
    assert!(e.message.contains("both before and after"), "{e}");
    let e = parse_model("g () => () <float[] c = {1}> {}").unwrap_err();
    assert!(e.message.contains("tensor shape"), "{e}");
}

#[test]
fn empty_slots() {
    let g = parse_graph("g () => () { , a, = Op(x, , y,) }").unwrap();
    assert_eq!(g.node[0].output, ["", "a"]);
    assert_eq!(g.node[0].input, ["x", "", "y"]);
    let text = print_graph(&g);
    assert_eq!(parse_graph(&text).unwrap(), g, "{text}");
}

#[test]
fn pretty_details() {
    let m = parse_model(
        r#"<ir_version: 10, opset_import: ["" : 18, "local": 1]>
g (bool c, float[N] x) => (float[N] y)
{
  [n1] t = local.F <axis = 1, perm = [1, 0]> (x)
  a, b = Split(t)
  y = If (c) <then_branch = th () => (float[N] o) { o = Neg(a) }, else_branch = el () => (float[N] o) { o = Abs(b) }>
}
<domain: "local"> F <axis> (x) => (y) { y = Identity(x) }
"#,
    )
    .unwrap();
    let p = pretty(&m);
    let expected = "opset: domain='' version=18
opset: domain='local' version=1
graph: name='g'
input: bool[] c
input: float[N] x
0: local.F(x) <axis=1, perm=[1, 0]> -> t  [n1]
1: Split(t) -> a, b
2: If(c) <then_branch=graph, else_branch=graph> -> y
  then_branch:
    graph: name='th'
    0: Neg(a) -> o
    output: float[N] o
  else_branch:
    graph: name='el'
    0: Abs(b) -> o
    output: float[N] o
output: float[N] y
function: local.F(x) -> y <axis>
  0: Identity(x) -> y
";
    assert_eq!(p, expected);
}

/// Canonical lines of `n` distinct nodes, each indented by `pad`.
fn many_node_lines(n: usize, pad: &str) -> String {
    let mut s = String::new();
    for i in 0..n {
        let line = match i % 3 {
            0 => format!("t{i} = Neg (x)"),
            1 => format!(
                "[n{i}] t{i} = Mul <alpha = {i}.5, axes = [0, {i}]> (t{}, x)",
                i - 1
            ),
            _ => format!("t{i} = Relu <doc = \"r\\\"{i}\"> (\"t {}\")", i - 1),
        };
        s.push_str(&format!("{pad}{line}\n"));
    }
    s
}

#[test]
fn large_blocks_print_in_order() {
    // Blocks this long are printed in chunks on the rayon pool; the text
    // is the canonical one, line for line, at the top level and nested.
    let n = print::PAR_NODES * 2 + 123;
    let text = format!(
        "g (float x, bool c) => (float y)\n{{\n{}  y = If <then_branch = th () => (float o)\n      {{\n{}        o = Neg (x)\n      }}, else_branch = el () => (float o)\n      {{\n        o = Abs (x)\n      }}> (c)\n}}\n",
        many_node_lines(n, "  "),
        many_node_lines(n, "        "),
    );
    let g = parse_graph(&text).unwrap();
    assert_eq!(g.node.len(), n + 1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| print_graph(&g)), text);
    assert_eq!(print_graph(&g), text);
}
