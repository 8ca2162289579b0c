//! Unit and property tests of shape rules, data propagation, control flow
//! and model-local functions, on small text models.

use onnx_light::shape::{infer_model, InferReport};
use onnx_light::text::parse_model;
use proptest::prelude::*;

fn infer(text: &str) -> InferReport {
    let mut m = parse_model(text).unwrap_or_else(|e| panic!("{e}"));
    infer_model(&mut m)
}

fn ty(r: &InferReport, name: &str) -> String {
    r.get(name)
        .map(|v| v.ty.display())
        .unwrap_or_else(|| "<none>".into())
}

#[test]
fn reshape_of_shape_gather_concat() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N,C,4] x) => (float[N,?] y) {
  s = Shape(x)
  i = Constant <value = int64[1] {0}> ()
  n = Gather(s, i)
  m = Constant <value = int64[1] {-1}> ()
  t = Concat <axis = 0> (n, m)
  y = Reshape(x, t)
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[N,4*C]");
}

#[test]
fn conv_output_expressions() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3,H,W] x, float[8,3,3,3] w) => (float[N,8,?,?] y) {
  y = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)
}"#,
    );
    let t = ty(&r, "y");
    assert!(t.starts_with("float[N,8,"), "{t}");
    assert!(!t.contains('?'), "{t}");
}

#[test]
fn broadcasting_n_with_1() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N,1,4] a, float[1,C,1] b) => (float[?,?,?] y) {
  y = Add(a, b)
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[N,C,4]");
}

/// Equal, Not, Mod, And, Div, Where on shape values (the GQA pattern of the
/// Attention function): the Expand target stays known.
#[test]
fn logic_and_where_on_shape_values() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[2,3,4,8] q, float[2,3,6,8] k) => (float[?,?,?] y) {
  a = Shape <start = 1, end = 2> (q)
  b = Shape <start = 1, end = 2> (k)
  e = Equal(a, b)
  n = Not(e)
  m = Mod(a, b)
  z = Constant <value = int64[1] {0}> ()
  e2 = Equal(m, z)
  c = And(n, e2)
  d = Div(a, b)
  one = Constant <value = int64[1] {1}> ()
  w = Where(c, d, one)
  t = Concat <axis = 0> (w, a, b)
  y = ConstantOfShape(t)
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[1,3,3]", "{:?}", r.warnings);
}

#[test]
fn max_min_neg_abs_cast_on_values() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N,C] x) => (float[?,?] y) {
  s = Shape(x)
  k = Constant <value = int64[2] {1, 5}> ()
  mx = Max(s, k)
  ng = Neg(mx)
  ab = Neg(ng)
  c = Cast <to = 6> (ab)
  c2 = CastLike(c, s)
  y = ConstantOfShape(c2)
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[Max(1, N),Max(5, C)]");
}

#[test]
fn if_with_a_known_condition_takes_its_branch() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] x) => (float[?,?] y) {
  s = Shape(x)
  r = Size(s)
  two = Constant <value = int64 {2}> ()
  c = Equal(r, two)
  y = If (c) <then_branch = t () => (float[?,?] a) { a = Identity(x) },
              else_branch = e () => (float[?] b) { b = Flatten(x) }>
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[N,4]");
}

#[test]
fn if_merges_branches_with_fresh_symbols() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (bool c, float[N,4] x, float[M,4] z) => (float[?,?] y) {
  y = If (c) <then_branch = t () => (float[?,?] a) { a = Identity(x) },
              else_branch = e () => (float[?,?] b) { b = Identity(z) }>
}"#,
    );
    let t = ty(&r, "y");
    assert!(t.starts_with("float[_If") && t.ends_with(",4]"), "{t}");
}

#[test]
fn model_local_function_is_inferred_through_its_body() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18, "local": 1]>
g (float[N,C] x) => (y) {
  y = local.Twice <axis = 1> (x)
  z = local.Twice (x)
}

<domain: "local", opset_import: ["" : 18]>
Twice <axis = 0> (a) => (b)
{
  b = Concat <axis: int = @axis> (a, a)
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[N,2*C]", "{:?}", r.warnings);
    assert_eq!(ty(&r, "z"), "float[2*N,C]", "{:?}", r.warnings);
}

#[test]
fn function_values_flow_through_the_body() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18, "local": 1]>
g (float[N,C,4] x) => (y) {
  s = local.LastTwo (x)
  y = Reshape(x, s)
}

<domain: "local", opset_import: ["" : 18]>
LastTwo (a) => (s)
{
  sh = Shape(a)
  n = Shape <start = 0, end = 1> (a)
  m = Constant <value = int64[1] {-1}> ()
  s = Concat <axis = 0> (n, m)
}"#,
    );
    assert_eq!(ty(&r, "y"), "float[N,4*C]", "{:?}", r.warnings);
}

#[test]
fn data_dependent_sizes_get_fresh_symbols() {
    let r = infer(
        r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N] x, int64[2] s) => (float[?,?] y) {
  y = Expand(x, s)
}"#,
    );
    let t = ty(&r, "y");
    assert!(!t.contains('?'), "{t}");
}

proptest! {
    /// Reshape(x, Concat(Shape(x)[0], [-1])) flattens the tail for any
    /// constant tail dims.
    #[test]
    fn reshape_keeps_batch_and_flattens_tail(a in 1i64..9, b in 1i64..9) {
        let r = infer(&format!(
            r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[N,{a},{b}] x) => (float[?,?] y) {{
  s = Shape <start = 0, end = 1> (x)
  m = Constant <value = int64[1] {{-1}}> ()
  t = Concat <axis = 0> (s, m)
  y = Reshape(x, t)
}}"#));
        prop_assert_eq!(ty(&r, "y"), format!("float[N,{}]", a * b));
    }

    /// Broadcasting a symbol with 1 in either order gives the symbol.
    #[test]
    fn broadcast_symbol_with_one(left in proptest::bool::ANY, n in 2i64..50) {
        let (a, b) = if left { ("N", "1") } else { ("1", "N") };
        let r = infer(&format!(
            r#"<ir_version: 10, opset_import: ["" : 18]>
g (float[{a},{n}] x, float[{b},1] z) => (float[?,?] y) {{
  y = Mul(x, z)
}}"#));
        prop_assert_eq!(ty(&r, "y"), format!("float[N,{n}]"));
    }
}
