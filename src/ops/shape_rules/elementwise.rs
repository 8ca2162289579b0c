//! Rules for elementwise operators: broadcasting binaries (with data
//! propagation of integer arithmetic) and shape-preserving unaries.

use super::broadcast;
use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError, SymValue};

/// Output 0 has input 0's type and the broadcast of all inputs' shapes.
pub fn broadcast_inputs(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let mut shapes = Vec::new();
    for i in 0..cx.num_inputs() {
        if !cx.has_input(i) {
            continue;
        }
        match cx.shape(i) {
            Some(s) => shapes.push(s.to_vec()),
            None => {
                cx.set_tensor(0, elem, None);
                return Ok(());
            }
        }
    }
    let refs: Vec<&[_]> = shapes.iter().map(|s| s.as_slice()).collect();
    let out = broadcast(&refs)?;
    cx.set_tensor(0, elem, Some(out));
    if elem.is_int() {
        fold_values(cx);
    }
    Ok(())
}

/// Data propagation of the variadic integer operators and Mod.
fn fold_values(cx: &mut InferCtx) {
    let fold = |a: &[Expr], f: fn(&Expr, &Expr) -> Expr| {
        a.iter().skip(1).fold(a[0].clone(), |m, x| f(&m, x))
    };
    match cx.node.op_type() {
        "Max" => propagate_all(cx, |a| Some(fold(a, Expr::max))),
        "Min" => propagate_all(cx, |a| Some(fold(a, Expr::min))),
        "Sum" => propagate_all(cx, |a| Some(fold(a, Expr::add))),
        // integer Mod takes the divisor's sign (floor modulo)
        "Mod" if cx.attrs.int_or("fmod", 0) == 0 => propagate(cx, |a, b| {
            let (x, y) = (a.as_int()?, b.as_int()?);
            let r = x.checked_rem_euclid(y)?;
            Some(Expr::int(if y < 0 && r != 0 { r + y } else { r }))
        }),
        _ => {}
    }
}

/// Data propagation of an elementwise operator over all its inputs' known
/// values (broadcasting scalars and equal-length tensors).
fn propagate_all(cx: &mut InferCtx, f: impl Fn(&[Expr]) -> Option<Expr>) {
    let n_in = cx.num_inputs();
    let vals: Option<Vec<SymValue>> = (0..n_in).map(|i| cx.value(i).cloned()).collect();
    let Some(vals) = vals.filter(|v| !v.is_empty()) else {
        return;
    };
    let n = vals.iter().map(|v| v.values.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut args = Vec::with_capacity(vals.len());
        for v in &vals {
            match v.values.len() {
                1 => args.push(v.values[0].clone()),
                k if k == n => args.push(v.values[i].clone()),
                _ => return,
            }
        }
        match f(&args) {
            Some(e) => out.push(e),
            None => return,
        }
    }
    let shape = vals
        .iter()
        .max_by_key(|v| v.shape.len())
        .map(|v| v.shape.clone())
        .unwrap_or_default();
    if shape.iter().product::<usize>() == out.len() {
        cx.set_value(0, SymValue { shape, values: out });
    }
}

/// Data propagation of a unary operator.
fn propagate_unary(cx: &mut InferCtx, f: impl Fn(&Expr) -> Option<Expr>) {
    if let Some(v) = cx.value(0).cloned() {
        let values: Option<Vec<Expr>> = v.values.iter().map(&f).collect();
        if let Some(values) = values {
            cx.set_value(
                0,
                SymValue {
                    shape: v.shape,
                    values,
                },
            );
        }
    }
}

fn truth(b: bool) -> Expr {
    Expr::int(i64::from(b))
}

/// Comparison of two known values: constants, or expressions whose
/// difference simplifies to a constant.
fn compare_values(a: &Expr, b: &Expr, op: &str) -> Option<Expr> {
    let d = a.sub(b).as_int()?;
    let r = match op {
        "Equal" => d == 0,
        "Less" => d < 0,
        "LessOrEqual" => d <= 0,
        "Greater" => d > 0,
        "GreaterOrEqual" => d >= 0,
        _ => return None,
    };
    Some(truth(r))
}

fn propagate(cx: &mut InferCtx, f: impl Fn(&Expr, &Expr) -> Option<Expr>) {
    let (Some(a), Some(b)) = (cx.value(0), cx.value(1)) else {
        return;
    };
    let (a, b) = (a.clone(), b.clone());
    let n = a.values.len().max(b.values.len());
    let pick = |v: &SymValue, i: usize| -> Option<Expr> {
        match v.values.len() {
            1 => Some(v.values[0].clone()),
            k if k == n => Some(v.values[i].clone()),
            _ => None,
        }
    };
    let vals: Option<Vec<Expr>> = (0..n).map(|i| f(&pick(&a, i)?, &pick(&b, i)?)).collect();
    if let Some(values) = vals {
        let shape = if a.shape.len() >= b.shape.len() {
            a.shape
        } else {
            b.shape
        };
        if shape.iter().product::<usize>() == values.len() {
            cx.set_value(0, SymValue { shape, values });
        }
    }
}

pub fn add(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    propagate(cx, |a, b| Some(a.add(b)));
    Ok(())
}

pub fn sub(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    propagate(cx, |a, b| Some(a.sub(b)));
    Ok(())
}

pub fn mul(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    propagate(cx, |a, b| Some(a.mul(b)));
    Ok(())
}

pub fn div(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)?;
    // integer Div truncates toward zero; floor division agrees for the
    // non-negative sizes that shapes hold
    if cx.elem(0).is_some_and(|e| e.is_float()) {
        // a float quotient stays a value only when it is an integer
        propagate(cx, |a, b| match (a.as_int(), b.as_int()) {
            (_, Some(1)) => Some(a.clone()),
            (Some(x), Some(y)) if y != 0 && x % y == 0 => Some(Expr::int(x / y)),
            _ => None,
        });
    } else {
        propagate(cx, |a, b| (b.as_int() != Some(0)).then(|| a.floor_div(b)));
    }
    Ok(())
}

/// Output 0 has input 0's type and shape; integer values propagate
/// through Neg, Abs, Sign, Not and the rounding operators.
pub fn same_as_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    if let Some(t) = cx.input(0).cloned() {
        cx.set(0, t);
    }
    match cx.node.op_type() {
        "Neg" => propagate_unary(cx, |e| Some(e.neg())),
        "Abs" => propagate_unary(cx, |e| e.as_int().map(|v| Expr::int(v.saturating_abs()))),
        "Sign" => propagate_unary(cx, |e| e.as_int().map(|v| Expr::int(v.signum()))),
        "Not" => propagate_unary(cx, |e| e.as_int().map(|v| truth(v == 0))),
        // values are integers, even in a float tensor
        "Floor" | "Ceil" | "Round" => propagate_unary(cx, |e| Some(e.clone())),
        _ => {}
    }
    Ok(())
}

/// Identity: same type, and the same known value.
pub fn identity(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)?;
    if let Some(v) = cx.value(0).cloned() {
        cx.set_value(0, v);
    }
    Ok(())
}

/// Output 0: a broadcast of all inputs' shapes with element type `elem`.
fn broadcast_as(cx: &mut InferCtx, elem: crate::tensor::DataType) -> Result<(), ShapeError> {
    let mut shapes = Vec::new();
    for i in 0..cx.num_inputs() {
        if !cx.has_input(i) {
            continue;
        }
        match cx.shape(i) {
            Some(s) => shapes.push(s.to_vec()),
            None => {
                cx.set_tensor(0, elem, None);
                return Ok(());
            }
        }
    }
    let refs: Vec<&[_]> = shapes.iter().map(|s| s.as_slice()).collect();
    let out = broadcast(&refs)?;
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

/// Comparisons: the broadcast shape, bool elements.
pub fn compare(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_as(cx, crate::tensor::DataType::Bool)?;
    let op = cx.node.op_type().to_string();
    match op.as_str() {
        "And" => propagate(cx, |a, b| Some(truth(a.as_int()? != 0 && b.as_int()? != 0))),
        "Or" => propagate(cx, |a, b| Some(truth(a.as_int()? != 0 || b.as_int()? != 0))),
        "Xor" => propagate(cx, |a, b| {
            Some(truth((a.as_int()? != 0) != (b.as_int()? != 0)))
        }),
        _ => propagate(cx, |a, b| compare_values(a, b, &op)),
    }
    Ok(())
}

/// Output 0 is bool with input 0's shape (IsNaN, IsInf).
pub fn bool_like_input(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, crate::tensor::DataType::Bool, shape);
    Ok(())
}

/// Clip: the input's type and shape (bounds are scalars).
pub fn clip(cx: &mut InferCtx) -> Result<(), ShapeError> {
    same_as_input(cx)
}

/// Where: the broadcast of condition, X and Y, with X's type.
pub fn where_rule(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.elem(1) {
        Some(e) => e,
        None => cx.elem_req(2)?,
    };
    broadcast_as(cx, elem)?;
    // a known condition selects; an unknown one still gives a value where
    // both choices agree
    propagate_all(cx, |a| match (a.len(), a[0].as_int()) {
        (3, Some(c)) => Some(if c != 0 { a[1].clone() } else { a[2].clone() }),
        (3, None) if a[1] == a[2] => Some(a[1].clone()),
        _ => None,
    });
    Ok(())
}

/// PRelu: X's type, the broadcast of X and slope.
pub fn prelu(cx: &mut InferCtx) -> Result<(), ShapeError> {
    broadcast_inputs(cx)
}

fn dtype_of_code(code: i64, what: &str) -> Result<crate::tensor::DataType, ShapeError> {
    i32::try_from(code)
        .ok()
        .and_then(crate::tensor::DataType::from_code)
        .filter(|d| *d != crate::tensor::DataType::Undefined)
        .ok_or_else(|| ShapeError(format!("{what} = {code} is not a data type")))
}

/// Cast: the `to` type with the input's shape; integer values propagate
/// through integer-to-integer casts.
pub fn cast(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let code = cx
        .attrs
        .int("to")
        .ok_or_else(|| ShapeError("Cast: missing attribute 'to'".into()))?;
    let to = dtype_of_code(code, "to")?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, to, shape);
    cast_known_value(cx, to);
    Ok(())
}

/// The value of a Cast: integers stay integers; a float target keeps
/// them while it holds them exactly; a float source holds integers only
/// (see [`SymValue`]), which every integer type takes unchanged.
fn cast_known_value(cx: &mut InferCtx, to: crate::tensor::DataType) {
    let Some(v) = cx.value(0).cloned() else {
        return;
    };
    let Some(from) = cx.elem(0) else {
        return;
    };
    let intish = |d: crate::tensor::DataType| d.is_int() || d == crate::tensor::DataType::Bool;
    if intish(to) && (intish(from) || from.is_float()) {
        cast_value(cx, v, to);
    } else if to.is_float() && v.fits_float(to) && (intish(from) || from.is_float()) {
        cx.set_value(0, v);
    }
}

/// Sets a cast integer value: bool targets keep known truth values only.
fn cast_value(cx: &mut InferCtx, v: SymValue, to: crate::tensor::DataType) {
    if to == crate::tensor::DataType::Bool {
        let values: Option<Vec<Expr>> = v
            .values
            .iter()
            .map(|e| e.as_int().map(|x| truth(x != 0)))
            .collect();
        if let Some(values) = values {
            cx.set_value(
                0,
                SymValue {
                    shape: v.shape,
                    values,
                },
            );
        }
    } else {
        cx.set_value(0, v);
    }
}

/// CastLike: input 1's type with input 0's shape.
pub fn cast_like(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let to = cx.elem_req(1)?;
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, to, shape);
    cast_known_value(cx, to);
    Ok(())
}

/// QuantizeLinear: x's shape; the type of `output_dtype`, else of the zero
/// point, else uint8.
pub fn quantize_linear(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.attrs.int("output_dtype") {
        Some(c) if c != 0 => dtype_of_code(c, "output_dtype")?,
        _ => {
            if cx.has_input(2) {
                cx.elem_req(2)?
            } else {
                crate::tensor::DataType::Uint8
            }
        }
    };
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}

/// DequantizeLinear: x's shape; the type of `output_dtype`, else of the scale.
pub fn dequantize_linear(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = match cx.attrs.int("output_dtype") {
        Some(c) if c != 0 => dtype_of_code(c, "output_dtype")?,
        _ => cx.elem_req(1)?,
    };
    let shape = cx.shape(0).map(|s| s.to_vec());
    cx.set_tensor(0, elem, shape);
    Ok(())
}
