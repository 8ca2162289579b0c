//! Evaluation with 128-bit checked intermediates.

use super::simplify::{fold_div, DivKind};
use super::{Bindings, Expr, ExprError};

pub(crate) fn eval(e: &Expr, b: &Bindings) -> Result<i64, ExprError> {
    if let Some(name) = first_unbound(e, b) {
        return Err(ExprError::new(format!("unbound symbol '{name}'")));
    }
    let v = eval128(e, b)?;
    i64::try_from(v).map_err(|_| overflow())
}

fn overflow() -> ExprError {
    ExprError::new("integer overflow")
}

/// The first unbound symbol in left-to-right (textual) order.
fn first_unbound<'a>(e: &'a Expr, b: &Bindings) -> Option<&'a str> {
    match e {
        Expr::Int(_) => None,
        Expr::Sym(s) => (!b.contains_key(s)).then_some(s.as_str()),
        Expr::Add(xs) | Expr::Mul(xs) | Expr::Max(xs) | Expr::Min(xs) => {
            xs.iter().find_map(|x| first_unbound(x, b))
        }
        Expr::FloorDiv(x, y) | Expr::Mod(x, y) | Expr::CeilDiv(x, y) => {
            first_unbound(x, b).or_else(|| first_unbound(y, b))
        }
    }
}

fn eval_div(kind: DivKind, x: &Expr, y: &Expr, b: &Bindings) -> Result<i128, ExprError> {
    let (x, y) = (eval128(x, b)?, eval128(y, b)?);
    if y == 0 {
        return Err(ExprError::new(match kind {
            DivKind::Mod => "modulo by zero",
            _ => "division by zero",
        }));
    }
    fold_div(kind, x, y).ok_or_else(overflow)
}

fn eval128(e: &Expr, b: &Bindings) -> Result<i128, ExprError> {
    match e {
        Expr::Int(v) => Ok((*v).into()),
        Expr::Sym(s) => b
            .get(s)
            .map(|v| (*v).into())
            .ok_or_else(|| ExprError::new(format!("unbound symbol '{s}'"))),
        Expr::Add(xs) => xs.iter().try_fold(0i128, |acc, x| {
            acc.checked_add(eval128(x, b)?).ok_or_else(overflow)
        }),
        Expr::Mul(xs) => xs.iter().try_fold(1i128, |acc, x| {
            acc.checked_mul(eval128(x, b)?).ok_or_else(overflow)
        }),
        Expr::FloorDiv(x, y) => eval_div(DivKind::Floor, x, y, b),
        Expr::CeilDiv(x, y) => eval_div(DivKind::Ceil, x, y, b),
        Expr::Mod(x, y) => eval_div(DivKind::Mod, x, y, b),
        Expr::Max(xs) | Expr::Min(xs) => {
            let is_max = matches!(e, Expr::Max(_));
            let mut best: Option<i128> = None;
            for x in xs {
                let v = eval128(x, b)?;
                best = Some(match best {
                    Some(o) if is_max => o.max(v),
                    Some(o) => o.min(v),
                    None => v,
                });
            }
            best.ok_or_else(|| {
                ExprError::new(if is_max {
                    "Max of no arguments"
                } else {
                    "Min of no arguments"
                })
            })
        }
    }
}
