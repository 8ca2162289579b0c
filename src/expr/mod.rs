//! Symbolic dimension expressions: parse, simplify, evaluate, compare.
//!
//! This module owns the expressions used for ONNX tensor dimensions, such as
//! `N`, `2*N+1`, `(H+2*P-K)//S+1` or `CeilToInt(L, 8)`:
//!
//! - the [`Expr`] tree and its text syntax ([`Expr::parse`], `Display`):
//!   integer literals, identifiers, `+ - * // %`, unary `-`, parentheses and
//!   the functions `CeilToInt(a, b)`, `Max(a, b, ...)`, `Min(a, b, ...)`, with
//!   Python precedence and Python floor semantics for `//` and `%`;
//! - simplification to a canonical form ([`Expr::simplify`]), so that equal
//!   expressions usually print equally (`N*2`, `2*N` and `N+N` all print `2*N`);
//! - evaluation under [`Bindings`] ([`Expr::eval`]), partial evaluation
//!   ([`Expr::substitute`]) and a conservative equality test ([`Expr::equals`]).
//!
//! # Canonical form
//!
//! A simplified expression is a polynomial: a sum of terms, each an integer
//! coefficient times a sorted product of *atoms*. Atoms are symbols and the
//! non-polynomial operations `a//b`, `a%b`, `CeilToInt(a, b)`, `Max(..)` and
//! `Min(..)`, whose arguments are themselves simplified. Division-like atoms
//! are normalized (positive leading divisor coefficient, common factors of
//! numerator and divisor cancelled, exactly divisible terms pulled out), and
//! `Max`/`Min` drop arguments that are provably dominated.
//!
//! # Arithmetic and overflow
//!
//! Values are exact integers: [`Expr::eval`] computes in `i128` and, when
//! an intermediate leaves that range, again in big integers, so the only
//! overflow is a final value that does not fit in an `i64` (the error
//! `integer overflow`). `(9223372036854775807*9223372036854775807)*(M-M)`
//! is `0`. Division or modulo by zero is an error; nothing panics.
//!
//! Simplification keeps that meaning: `eval(simplify(e))` equals
//! `eval(e)` for every binding, errors included, with one documented
//! exception. Coefficients are `i64`; when folding a sum or product would
//! overflow them, that part is kept unfolded (still exact, since
//! evaluation is), and a constant part is folded by its exact value when
//! that fits. A divisor that is zero whatever the symbols (`N//0`,
//! `N%(M-M)`) makes the expression fail: the simplifier then cancels and
//! drops nothing around it (`N//0 - N//0` stays an error, not `0`).
//!
//! The exception: a divisor that depends on symbols is assumed nonzero.
//! Shape arithmetic needs `2*N//N` to be `2` and `(N*M)//M` to be `N`,
//! although with `N = 0` (or `M = 0`) the original divides by zero; the
//! simplified form then gives a value where the original fails. No other
//! rewrite turns an error into a value or changes a value. The property
//! tests in `tests.rs` check exactly this (skipping bindings where a
//! symbolic divisor is zero); `cargo test --release -- --ignored wide_`
//! runs the wide random search.

mod eval;
mod parse;
mod poly;
mod print;
mod simplify;
mod sympy;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
pub use sympy::from_sympy;

/// Values for symbols, used by [`Expr::eval`] and [`Expr::substitute`].
pub type Bindings = BTreeMap<String, i64>;

/// A dimension expression.
///
/// Any tree is a valid expression; the constructors and builders return
/// simplified (canonical) trees. `Add` and `Mul` are n-ary: an empty sum is
/// 0 and an empty product is 1. Subtraction is `a + (-1)*b` and negation is
/// `(-1)*a`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// A named symbol (an identifier, see [`is_identifier`]).
    Sym(String),
    /// The sum of the children.
    Add(Vec<Expr>),
    /// The product of the children.
    Mul(Vec<Expr>),
    /// Floor division `a // b` (Python semantics).
    FloorDiv(Box<Expr>, Box<Expr>),
    /// Modulo `a % b` (Python semantics: the sign follows the divisor).
    Mod(Box<Expr>, Box<Expr>),
    /// Ceiling division `CeilToInt(a, b)`.
    CeilDiv(Box<Expr>, Box<Expr>),
    /// The largest argument.
    Max(Vec<Expr>),
    /// The smallest argument.
    Min(Vec<Expr>),
}

/// An error from parsing or evaluating an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    /// What went wrong, without the position.
    pub message: String,
    /// Byte offset in the parsed text, for a caret (parse errors only).
    pub pos: Option<usize>,
}

impl ExprError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ExprError {
            message: message.into(),
            pos: None,
        }
    }

    pub(crate) fn at(message: impl Into<String>, pos: usize) -> Self {
        ExprError {
            message: message.into(),
            pos: Some(pos),
        }
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{} at column {}", self.message, p + 1),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ExprError {}

/// True when `s` is a plain identifier: a letter or `_`, then letters,
/// digits or `_` (ASCII only).
/// Whether a symbol prints bare in an expression: an identifier, dots
/// allowed between name characters (`p2o.DynamicDimension.0`). Other
/// symbols print quoted (`"batch size"`).
pub fn is_bare_symbol(s: &str) -> bool {
    !s.starts_with('.')
        && !s.ends_with('.')
        && !s.contains("..")
        && is_identifier(&s.replace('.', "_"))
}

pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Expr {
    /// Parses `text` and returns the simplified expression.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        parse::parse_raw(text).map(|e| e.simplify())
    }

    /// An integer literal.
    pub fn int(v: i64) -> Expr {
        Expr::Int(v)
    }

    /// A symbol. The name should be an identifier (see [`is_identifier`]),
    /// otherwise the printed form does not parse back.
    pub fn sym(name: &str) -> Expr {
        Expr::Sym(name.to_string())
    }

    /// The value of an integer literal (after simplification, a constant
    /// expression is an integer literal unless its folding overflowed).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// True for an integer literal.
    pub fn is_int(&self) -> bool {
        matches!(self, Expr::Int(_))
    }

    /// All symbol names occurring in the expression.
    pub fn symbols(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_symbols(&mut out);
        out
    }

    fn collect_symbols(&self, out: &mut BTreeSet<String>) {
        match self {
            Expr::Int(_) => {}
            Expr::Sym(s) => {
                out.insert(s.clone());
            }
            Expr::Add(xs) | Expr::Mul(xs) | Expr::Max(xs) | Expr::Min(xs) => {
                xs.iter().for_each(|x| x.collect_symbols(out))
            }
            Expr::FloorDiv(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
            }
        }
    }

    /// The canonical form; idempotent and semantics-preserving.
    pub fn simplify(&self) -> Expr {
        simplify::simplify(self)
    }

    /// Evaluates under `b`. Errors: an unbound symbol (the first one in
    /// left-to-right order), division or modulo by zero, overflow.
    pub fn eval(&self, b: &Bindings) -> Result<i64, ExprError> {
        eval::eval(self, b)
    }

    /// Replaces the bound symbols by their values and simplifies.
    pub fn substitute(&self, b: &Bindings) -> Expr {
        self.map_symbols(&|name| b.get(name).map(|v| Expr::Int(*v)))
            .simplify()
    }

    /// Replaces every occurrence of the symbol `name` by `with` and
    /// simplifies.
    pub fn replace_symbol(&self, name: &str, with: &Expr) -> Expr {
        self.map_symbols(&|n| (n == name).then(|| with.clone()))
            .simplify()
    }

    fn map_symbols(&self, f: &dyn Fn(&str) -> Option<Expr>) -> Expr {
        let map_all = |xs: &Vec<Expr>| xs.iter().map(|x| x.map_symbols(f)).collect::<Vec<_>>();
        let bx = |x: &Expr| Box::new(x.map_symbols(f));
        match self {
            Expr::Int(_) => self.clone(),
            Expr::Sym(s) => f(s).unwrap_or_else(|| self.clone()),
            Expr::Add(xs) => Expr::Add(map_all(xs)),
            Expr::Mul(xs) => Expr::Mul(map_all(xs)),
            Expr::Max(xs) => Expr::Max(map_all(xs)),
            Expr::Min(xs) => Expr::Min(map_all(xs)),
            Expr::FloorDiv(a, b) => Expr::FloorDiv(bx(a), bx(b)),
            Expr::Mod(a, b) => Expr::Mod(bx(a), bx(b)),
            Expr::CeilDiv(a, b) => Expr::CeilDiv(bx(a), bx(b)),
        }
    }

    /// `self + o`, simplified.
    pub fn add(&self, o: &Expr) -> Expr {
        Expr::Add(vec![self.clone(), o.clone()]).simplify()
    }

    /// `self - o`, simplified.
    pub fn sub(&self, o: &Expr) -> Expr {
        Expr::Add(vec![
            self.clone(),
            Expr::Mul(vec![Expr::Int(-1), o.clone()]),
        ])
        .simplify()
    }

    /// `self * o`, simplified.
    pub fn mul(&self, o: &Expr) -> Expr {
        Expr::Mul(vec![self.clone(), o.clone()]).simplify()
    }

    /// `self // o`, simplified.
    pub fn floor_div(&self, o: &Expr) -> Expr {
        Expr::FloorDiv(Box::new(self.clone()), Box::new(o.clone())).simplify()
    }

    /// `self % o`, simplified.
    pub fn modulo(&self, o: &Expr) -> Expr {
        Expr::Mod(Box::new(self.clone()), Box::new(o.clone())).simplify()
    }

    /// `CeilToInt(self, o)`, simplified.
    pub fn ceil_div(&self, o: &Expr) -> Expr {
        Expr::CeilDiv(Box::new(self.clone()), Box::new(o.clone())).simplify()
    }

    /// `Max(self, o)`, simplified.
    ///
    /// `Expr` also implements [`Ord`], whose `max` takes `self` by value: on
    /// an owned `Expr`, `a.max(&b)` resolves to `Ord::max` and does not
    /// compile. Call `Expr::max(&a, &b)`, or `r.max(&b)` on a reference `r`.
    pub fn max(&self, o: &Expr) -> Expr {
        Expr::Max(vec![self.clone(), o.clone()]).simplify()
    }

    /// `Min(self, o)`, simplified. See [`Expr::max`] about `Ord::min`.
    pub fn min(&self, o: &Expr) -> Expr {
        Expr::Min(vec![self.clone(), o.clone()]).simplify()
    }

    /// `-self`, simplified.
    pub fn neg(&self) -> Expr {
        Expr::Mul(vec![Expr::Int(-1), self.clone()]).simplify()
    }

    /// `Some(true)` when provably equal, `Some(false)` when provably
    /// different (the difference simplifies to a nonzero constant), `None`
    /// when unknown.
    pub fn equals(&self, o: &Expr) -> Option<bool> {
        let (a, b) = (self.simplify(), o.simplify());
        if a == b {
            return Some(true);
        }
        match a.sub(&b) {
            Expr::Int(0) => Some(true),
            Expr::Int(_) => Some(false),
            _ => None,
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::to_text(self))
    }
}

impl std::str::FromStr for Expr {
    type Err = ExprError;

    fn from_str(s: &str) -> Result<Expr, ExprError> {
        Expr::parse(s)
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::Int(v)
    }
}
