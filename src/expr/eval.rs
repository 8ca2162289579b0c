//! Evaluation in exact integer arithmetic: a value is an error only when
//! the final result does not fit in an `i64` (or on division by zero, an
//! unbound symbol, `Max()`/`Min()` of nothing). Intermediates never
//! overflow: they are computed in `i128`, and when that overflows the whole
//! expression is computed again in big integers.

use super::simplify::{fold_div, DivKind};
use super::{Bindings, Expr, ExprError};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Zero};

pub(crate) fn eval(e: &Expr, b: &Bindings) -> Result<i64, ExprError> {
    if let Some(name) = first_unbound(e, b) {
        return Err(ExprError::new(format!("unbound symbol '{name}'")));
    }
    let v = match eval128(e, b) {
        Ok(v) => BigInt::from(v),
        Err(Fail::Overflow) => eval_big(e, b)?,
        Err(Fail::Error(err)) => return Err(err),
    };
    i64::try_from(&v).map_err(|_| overflow())
}

fn overflow() -> ExprError {
    ExprError::new("integer overflow")
}

/// Why the fast path stopped.
enum Fail {
    /// An `i128` intermediate overflowed: compute exactly instead.
    Overflow,
    Error(ExprError),
}

impl From<ExprError> for Fail {
    fn from(e: ExprError) -> Fail {
        Fail::Error(e)
    }
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

fn unbound(s: &str) -> ExprError {
    ExprError::new(format!("unbound symbol '{s}'"))
}

fn by_zero(kind: DivKind) -> ExprError {
    ExprError::new(match kind {
        DivKind::Mod => "modulo by zero",
        _ => "division by zero",
    })
}

fn empty(is_max: bool) -> ExprError {
    ExprError::new(if is_max {
        "Max of no arguments"
    } else {
        "Min of no arguments"
    })
}

fn eval_div(kind: DivKind, x: &Expr, y: &Expr, b: &Bindings) -> Result<i128, Fail> {
    let (x, y) = (eval128(x, b)?, eval128(y, b)?);
    if y == 0 {
        return Err(by_zero(kind).into());
    }
    fold_div(kind, x, y).ok_or(Fail::Overflow)
}

fn eval128(e: &Expr, b: &Bindings) -> Result<i128, Fail> {
    match e {
        Expr::Int(v) => Ok((*v).into()),
        Expr::Sym(s) => Ok(b.get(s).map(|v| (*v).into()).ok_or_else(|| unbound(s))?),
        Expr::Add(xs) => xs.iter().try_fold(0i128, |acc, x| {
            acc.checked_add(eval128(x, b)?).ok_or(Fail::Overflow)
        }),
        Expr::Mul(xs) => xs.iter().try_fold(1i128, |acc, x| {
            acc.checked_mul(eval128(x, b)?).ok_or(Fail::Overflow)
        }),
        Expr::FloorDiv(x, y) => eval_div(DivKind::Floor, x, y, b),
        Expr::CeilDiv(x, y) => eval_div(DivKind::Ceil, x, y, b),
        Expr::Mod(x, y) => eval_div(DivKind::Mod, x, y, b),
        Expr::Max(xs) | Expr::Min(xs) => {
            let is_max = matches!(e, Expr::Max(_));
            Ok(extreme(is_max, xs.iter().map(|x| eval128(x, b)))?.ok_or_else(|| empty(is_max))?)
        }
    }
}

/// The largest (`is_max`) or smallest of some values, each evaluated in
/// turn (the first error stops); `None` when there are none.
fn extreme<T: Ord, E>(
    is_max: bool,
    values: impl Iterator<Item = Result<T, E>>,
) -> Result<Option<T>, E> {
    let mut best: Option<T> = None;
    for v in values {
        let v = v?;
        best = Some(match best {
            Some(o) if is_max => o.max(v),
            Some(o) => o.min(v),
            None => v,
        });
    }
    Ok(best)
}

/// `x op y` with Python semantics, exactly; `y` is nonzero.
fn div_big(kind: DivKind, x: &BigInt, y: &BigInt) -> BigInt {
    match kind {
        DivKind::Floor => x.div_floor(y),
        DivKind::Mod => x.mod_floor(y),
        DivKind::Ceil => -((-x).div_floor(y)),
    }
}

fn eval_big(e: &Expr, b: &Bindings) -> Result<BigInt, ExprError> {
    match e {
        Expr::Int(v) => Ok(BigInt::from(*v)),
        Expr::Sym(s) => b.get(s).map(|v| BigInt::from(*v)).ok_or_else(|| unbound(s)),
        Expr::Add(xs) => xs
            .iter()
            .try_fold(BigInt::zero(), |acc, x| Ok(acc + eval_big(x, b)?)),
        Expr::Mul(xs) => xs
            .iter()
            .try_fold(BigInt::one(), |acc, x| Ok(acc * eval_big(x, b)?)),
        Expr::FloorDiv(x, y) | Expr::CeilDiv(x, y) | Expr::Mod(x, y) => {
            let kind = match e {
                Expr::FloorDiv(..) => DivKind::Floor,
                Expr::CeilDiv(..) => DivKind::Ceil,
                _ => DivKind::Mod,
            };
            let (x, y) = (eval_big(x, b)?, eval_big(y, b)?);
            if y.is_zero() {
                return Err(by_zero(kind));
            }
            Ok(div_big(kind, &x, &y))
        }
        Expr::Max(xs) | Expr::Min(xs) => {
            let is_max = matches!(e, Expr::Max(_));
            extreme(is_max, xs.iter().map(|x| eval_big(x, b)))?.ok_or_else(|| empty(is_max))
        }
    }
}
