//! The condition of a conditional breakpoint (`break --if EXPR`): a small
//! language over the statistics of the value just written.
//!
//! ```text
//! cond    := and ("or" | "||") and ...
//! and     := not ("and" | "&&") not ...
//! not     := ("not" | "!") not | "(" cond ")" | pred | cmp
//! pred    := isnan(T) | isinf(T) | isfinite(T) | any(isnan(T)) | any(isinf(T))
//!            | all(isfinite(T))
//! cmp     := num ("<" | "<=" | ">" | ">=" | "==" | "!=") num
//! num     := term (("+" | "-") term)...
//! term    := unary (("*" | "/") unary)...
//! unary   := "-" unary | NUMBER | REDUCE(T) | count(T) | "(" num ")"
//! REDUCE  := min | max | mean | std
//! T       := NAME | abs(NAME)
//! ```
//!
//! NAME stands for the value tested (any identifier: `z`, `x`, the value's
//! own name). `isnan(z)` is true when any element is NaN, `isinf(z)` when
//! any is infinite, `isfinite(z)` when all are finite. `min`, `max`,
//! `mean` and `std` are over the finite elements, as `print --stats`
//! computes them; a comparison with no finite element is false. A value
//! that is not a numeric tensor makes the whole condition false.

use crate::tensor::{Stats, Tensor, Value};
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, multispace0};
use nom::combinator::{all_consuming, map, opt, recognize, verify};
use nom::error::{ErrorKind, ParseError};
use nom::multi::many0;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::IResult;
use std::fmt;

/// Which elements a reduction or predicate reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Value(String),
    Abs(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    Min,
    Max,
    Mean,
    Std,
    /// The element count.
    Count,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    AnyNan,
    AnyInf,
    AllFinite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// A number-valued expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Num {
    Lit(f64),
    Stat(Reduce, Operand),
    Neg(Box<Num>),
    Bin(ArithOp, Box<Num>, Box<Num>),
}

/// A condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    Or(Box<Cond>, Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    Pred(Pred, Operand),
    Cmp(CmpOp, Num, Num),
}

/// A condition that does not parse: what and at which column (from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionError {
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ConditionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

/// Longest condition accepted, and deepest bracket nesting (the parser
/// recurses once per bracket).
const MAX_LEN: usize = 4096;
const MAX_NESTING: usize = 64;

/// Parses a condition.
pub fn parse(text: &str) -> Result<Cond, ConditionError> {
    if text.len() > MAX_LEN {
        return Err(ConditionError {
            column: MAX_LEN,
            message: format!("the condition is longer than {MAX_LEN} characters"),
        });
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(ConditionError {
                        column: i + 1,
                        message: format!("brackets nest deeper than {MAX_NESTING}"),
                    });
                }
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if text.trim().is_empty() {
        return Err(ConditionError {
            column: 1,
            message: "empty condition".into(),
        });
    }
    match all_consuming(delimited(multispace0, cond, multispace0))(text) {
        Ok((_, c)) => Ok(c),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            let column = text.len() - e.input.len() + 1;
            let near: String = e.input.chars().take(12).collect();
            let message = if near.is_empty() {
                "the condition ends too early".to_string()
            } else {
                format!(
                    "cannot read '{near}' (a condition is like 'max(abs(z)) > 1e4', 'isnan(z)', 'mean(z) < 0 and std(z) > 1')"
                )
            };
            Err(ConditionError { column, message })
        }
        Err(nom::Err::Incomplete(_)) => Err(ConditionError {
            column: text.len() + 1,
            message: "the condition ends too early".into(),
        }),
    }
}

/// A parse error that keeps the furthest point any alternative reached
/// (nom's default keeps the last alternative's, usually the start).
#[derive(Debug)]
struct Far<'a> {
    input: &'a str,
}

impl<'a> ParseError<&'a str> for Far<'a> {
    fn from_error_kind(input: &'a str, _: ErrorKind) -> Self {
        Far { input }
    }

    fn append(input: &'a str, _: ErrorKind, other: Self) -> Self {
        if input.len() < other.input.len() {
            Far { input }
        } else {
            other
        }
    }

    fn or(self, other: Self) -> Self {
        if self.input.len() <= other.input.len() {
            self
        } else {
            other
        }
    }
}

type Res<'a, O> = IResult<&'a str, O, Far<'a>>;

fn ws<'a, O>(p: impl FnMut(&'a str) -> Res<'a, O>) -> impl FnMut(&'a str) -> Res<'a, O> {
    preceded(multispace0, p)
}

fn ident(i: &str) -> Res<'_, &str> {
    ws(recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.'),
    )))(i)
}

/// A keyword: the word itself, not the start of a longer name.
fn keyword<'a>(word: &'static str) -> impl FnMut(&'a str) -> Res<'a, &'a str> {
    verify(ident, move |s: &str| s == word)
}

fn operand(i: &str) -> Res<'_, Operand> {
    alt((
        map(
            preceded(
                keyword("abs"),
                delimited(ws(char('(')), ident, ws(char(')'))),
            ),
            |n| Operand::Abs(n.to_string()),
        ),
        map(verify(ident, |s: &str| !is_function(s)), |n: &str| {
            Operand::Value(n.to_string())
        }),
    ))(i)
}

fn is_function(s: &str) -> bool {
    matches!(
        s,
        "abs"
            | "min"
            | "max"
            | "mean"
            | "std"
            | "count"
            | "isnan"
            | "isinf"
            | "isfinite"
            | "any"
            | "all"
            | "and"
            | "or"
            | "not"
    )
}

fn call<'a, O>(
    name: &'static str,
    inner: impl FnMut(&'a str) -> Res<'a, O>,
) -> impl FnMut(&'a str) -> Res<'a, O> {
    preceded(
        keyword(name),
        delimited(ws(char('(')), inner, ws(char(')'))),
    )
}

fn pred(i: &str) -> Res<'_, Cond> {
    let p = |name: &'static str, kind: Pred| map(call(name, operand), move |o| Cond::Pred(kind, o));
    alt((
        p("isnan", Pred::AnyNan),
        p("isinf", Pred::AnyInf),
        p("isfinite", Pred::AllFinite),
        map(call("any", call("isnan", operand)), |o| {
            Cond::Pred(Pred::AnyNan, o)
        }),
        map(call("any", call("isinf", operand)), |o| {
            Cond::Pred(Pred::AnyInf, o)
        }),
        map(call("all", call("isfinite", operand)), |o| {
            Cond::Pred(Pred::AllFinite, o)
        }),
    ))(i)
}

fn number(i: &str) -> Res<'_, f64> {
    let digits = |i| take_while1(|c: char| c.is_ascii_digit())(i);
    let (rest, text) = ws(recognize(tuple((
        alt((
            recognize(pair(digits, opt(pair(char('.'), opt(digits))))),
            recognize(pair(char('.'), digits)),
        )),
        opt(tuple((
            alt((char('e'), char('E'))),
            opt(alt((char('+'), char('-')))),
            digits,
        ))),
    ))))(i)?;
    match text.parse::<f64>() {
        Ok(v) => Ok((rest, v)),
        Err(_) => Err(nom::Err::Error(Far::from_error_kind(i, ErrorKind::Float))),
    }
}

fn unary(i: &str) -> Res<'_, Num> {
    let stat = |name: &'static str, r: Reduce| map(call(name, operand), move |o| Num::Stat(r, o));
    alt((
        map(preceded(ws(char('-')), unary), |n| Num::Neg(Box::new(n))),
        map(number, Num::Lit),
        map(keyword("inf"), |_| Num::Lit(f64::INFINITY)),
        stat("min", Reduce::Min),
        stat("max", Reduce::Max),
        stat("mean", Reduce::Mean),
        stat("std", Reduce::Std),
        stat("count", Reduce::Count),
        delimited(ws(char('(')), num, ws(char(')'))),
    ))(i)
}

fn fold(first: Num, rest: Vec<(ArithOp, Num)>) -> Num {
    rest.into_iter()
        .fold(first, |a, (op, b)| Num::Bin(op, Box::new(a), Box::new(b)))
}

fn term(i: &str) -> Res<'_, Num> {
    let (i, first) = unary(i)?;
    let (i, rest) = many0(pair(
        ws(alt((
            map(char('*'), |_| ArithOp::Mul),
            map(char('/'), |_| ArithOp::Div),
        ))),
        unary,
    ))(i)?;
    Ok((i, fold(first, rest)))
}

fn num(i: &str) -> Res<'_, Num> {
    let (i, first) = term(i)?;
    let (i, rest) = many0(pair(
        ws(alt((
            map(char('+'), |_| ArithOp::Add),
            map(char('-'), |_| ArithOp::Sub),
        ))),
        term,
    ))(i)?;
    Ok((i, fold(first, rest)))
}

fn cmp(i: &str) -> Res<'_, Cond> {
    let op = ws(alt((
        map(tag("<="), |_| CmpOp::Le),
        map(tag(">="), |_| CmpOp::Ge),
        map(tag("=="), |_| CmpOp::Eq),
        map(tag("!="), |_| CmpOp::Ne),
        map(tag("<"), |_| CmpOp::Lt),
        map(tag(">"), |_| CmpOp::Gt),
    )));
    map(tuple((num, op, num)), |(a, op, b)| Cond::Cmp(op, a, b))(i)
}

fn not(i: &str) -> Res<'_, Cond> {
    alt((
        map(preceded(alt((keyword("not"), ws(tag("!")))), not), |c| {
            Cond::Not(Box::new(c))
        }),
        pred,
        cmp,
        delimited(ws(char('(')), cond, ws(char(')'))),
    ))(i)
}

fn and(i: &str) -> Res<'_, Cond> {
    let (i, first) = not(i)?;
    let (i, rest) = many0(preceded(alt((keyword("and"), ws(tag("&&")))), not))(i)?;
    Ok((
        i,
        rest.into_iter()
            .fold(first, |a, b| Cond::And(Box::new(a), Box::new(b))),
    ))
}

fn cond(i: &str) -> Res<'_, Cond> {
    let (i, first) = and(i)?;
    let (i, rest) = many0(preceded(alt((keyword("or"), ws(tag("||")))), and))(i)?;
    Ok((
        i,
        rest.into_iter()
            .fold(first, |a, b| Cond::Or(Box::new(a), Box::new(b))),
    ))
}

/// The statistics a condition reads, computed once per value tested.
struct Facts<'a> {
    tensor: &'a Tensor,
    plain: Option<Option<Stats>>,
    abs: Option<Option<Stats>>,
}

impl Facts<'_> {
    fn stats(&mut self, o: &Operand) -> Option<&Stats> {
        match o {
            Operand::Value(_) => self
                .plain
                .get_or_insert_with(|| self.tensor.stats())
                .as_ref(),
            Operand::Abs(_) => {
                let t = self.tensor;
                self.abs
                    .get_or_insert_with(|| {
                        let v: Vec<f64> = t.to_f64_vec()?.into_iter().map(f64::abs).collect();
                        Tensor::from_vec(&[v.len()], v).ok()?.stats()
                    })
                    .as_ref()
            }
        }
    }
}

impl Cond {
    /// Whether the condition holds for a value (false for a value that is
    /// not a numeric tensor).
    pub fn holds(&self, v: &Value) -> bool {
        let t = match v {
            Value::Tensor(t) => t,
            Value::Optional(Some(inner)) => match inner.as_tensor() {
                Some(t) => t,
                None => return false,
            },
            _ => return false,
        };
        let mut f = Facts {
            tensor: t,
            plain: None,
            abs: None,
        };
        self.eval(&mut f)
    }

    fn eval(&self, f: &mut Facts) -> bool {
        match self {
            Cond::Or(a, b) => a.eval(f) || b.eval(f),
            Cond::And(a, b) => a.eval(f) && b.eval(f),
            Cond::Not(a) => !a.eval(f),
            Cond::Pred(p, o) => match f.stats(o) {
                None => false,
                Some(s) => match p {
                    Pred::AnyNan => s.nan > 0,
                    Pred::AnyInf => s.inf > 0,
                    Pred::AllFinite => s.nan == 0 && s.inf == 0,
                },
            },
            Cond::Cmp(op, a, b) => {
                let (Some(x), Some(y)) = (a.eval(f), b.eval(f)) else {
                    return false;
                };
                match op {
                    CmpOp::Lt => x < y,
                    CmpOp::Le => x <= y,
                    CmpOp::Gt => x > y,
                    CmpOp::Ge => x >= y,
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                }
            }
        }
    }
}

impl Num {
    fn eval(&self, f: &mut Facts) -> Option<f64> {
        Some(match self {
            Num::Lit(v) => *v,
            Num::Neg(a) => -a.eval(f)?,
            Num::Bin(op, a, b) => {
                let (x, y) = (a.eval(f)?, b.eval(f)?);
                match op {
                    ArithOp::Add => x + y,
                    ArithOp::Sub => x - y,
                    ArithOp::Mul => x * y,
                    ArithOp::Div => x / y,
                }
            }
            Num::Stat(r, o) => {
                let s = f.stats(o)?;
                match r {
                    Reduce::Min => s.min?,
                    Reduce::Max => s.max?,
                    Reduce::Mean => s.mean?,
                    Reduce::Std => s.std?,
                    Reduce::Count => s.count as f64,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: Vec<f32>) -> Value {
        Value::Tensor(Tensor::from_vec(&[v.len()], v).unwrap())
    }

    #[test]
    fn conditions_parse_and_hold() {
        let v = t(vec![1.0, -2e5, 3.0]);
        let yes = [
            "max(abs(z)) > 1e4",
            "min(z) < -1e5 and max(z) == 3",
            "not isnan(z)",
            "all(isfinite(z))",
            "(mean(z) < 0) || isinf(z)",
            "count(z) >= 3 and -max(z) + 1 < 0",
            "std(z) > 1e3 * 2 / 4",
        ];
        for c in yes {
            assert!(parse(c).unwrap().holds(&v), "{c}");
        }
        for c in [
            "isnan(z)",
            "any(isinf(z))",
            "max(z) > 1e4",
            "mean(abs(x)) < 1",
        ] {
            assert!(!parse(c).unwrap().holds(&v), "{c}");
        }
        let nan = t(vec![f32::NAN, 1.0]);
        assert!(parse("isnan(z)").unwrap().holds(&nan));
        assert!(parse("any(isnan(z)) and max(z) == 1").unwrap().holds(&nan));
        // no finite element: comparisons are false
        let all_nan = t(vec![f32::NAN]);
        assert!(!parse("max(z) > 0").unwrap().holds(&all_nan));
        assert!(!parse("max(z) <= 0").unwrap().holds(&all_nan));
    }

    #[test]
    fn malformed_conditions_name_the_column() {
        let e = parse("max(abs(z)) >").unwrap_err();
        assert!(e.column >= 12, "{e}");
        let e = parse("max(z) > 1 andd isnan(z)").unwrap_err();
        assert_eq!(e.column, 12, "{e}");
        assert!(parse("").is_err());
        assert!(parse("isnan(z").is_err());
        assert!(parse("foo(z) > 1").is_err());
        let deep = format!("{}isnan(z){}", "(".repeat(100), ")".repeat(100));
        assert!(parse(&deep).unwrap_err().message.contains("nest"));
    }
}
