//! The text form of expressions, with parentheses only where needed.
//!
//! Precedence levels: 1 for a sum, 2 for a product or `//`/`%`, 3 for a
//! unary minus (including negative literals), 4 for literals, symbols and
//! calls. Binary operators are left associative, so a left operand needs a
//! level at least the operator's and a right operand a higher one. Divisions
//! inside products are always parenthesized, for readability.

use super::Expr;

const SUM: u8 = 1;
const PRODUCT: u8 = 2;
const UNARY: u8 = 3;
const ATOM: u8 = 4;

pub(crate) fn to_text(e: &Expr) -> String {
    fmt(e).0
}

fn wrap(e: &Expr, need: u8) -> String {
    let (s, p) = fmt(e);
    if p < need {
        format!("({s})")
    } else {
        s
    }
}

/// When `e` reads as a negated term (a negative literal, or a product with
/// a negative leading coefficient), the term without its sign.
fn strip_negation(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Int(v) if *v < 0 => v.checked_neg().map(Expr::Int),
        // Only canonical-looking terms: with more literals among the factors
        // (an unfolded product), "-" would fuse with the next literal.
        Expr::Mul(xs) if xs.len() >= 2 && !xs[1..].iter().any(Expr::is_int) => match xs[0] {
            Expr::Int(-1) => Some(if xs.len() == 2 {
                xs[1].clone()
            } else {
                Expr::Mul(xs[1..].to_vec())
            }),
            Expr::Int(c) if c < 0 => {
                let mut rest = xs.clone();
                rest[0] = Expr::Int(c.checked_neg()?);
                Some(Expr::Mul(rest))
            }
            _ => None,
        },
        _ => None,
    }
}

fn call(name: &str, args: &[&Expr]) -> (String, u8) {
    let args: Vec<String> = args.iter().map(|a| fmt(a).0).collect();
    (format!("{name}({})", args.join(", ")), ATOM)
}

fn fmt(e: &Expr) -> (String, u8) {
    match e {
        Expr::Int(v) => (v.to_string(), if *v < 0 { UNARY } else { ATOM }),
        Expr::Sym(s) if super::is_bare_symbol(s) => (s.clone(), ATOM),
        Expr::Sym(s) => (
            format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
            ATOM,
        ),
        Expr::Add(xs) => match xs.len() {
            0 => ("0".to_string(), ATOM),
            1 => fmt(&xs[0]),
            _ => {
                let mut s = wrap(&xs[0], SUM);
                for x in &xs[1..] {
                    match strip_negation(x) {
                        Some(p) => {
                            s.push('-');
                            s.push_str(&wrap(&p, PRODUCT));
                        }
                        None => {
                            s.push('+');
                            s.push_str(&wrap(x, PRODUCT));
                        }
                    }
                }
                (s, SUM)
            }
        },
        Expr::Mul(xs) => match xs.len() {
            0 => ("1".to_string(), ATOM),
            1 => fmt(&xs[0]),
            _ => {
                let (mut s, rest, neg) = if xs[0] == Expr::Int(-1) {
                    ("-".to_string(), &xs[1..], true)
                } else {
                    (String::new(), &xs[..], false)
                };
                let factors: Vec<String> = rest.iter().map(|x| wrap(x, UNARY)).collect();
                s.push_str(&factors.join("*"));
                let prec = if neg && rest.len() == 1 {
                    UNARY
                } else {
                    PRODUCT
                };
                (s, prec)
            }
        },
        Expr::FloorDiv(a, b) => (format!("{}//{}", wrap(a, PRODUCT), wrap(b, UNARY)), PRODUCT),
        Expr::Mod(a, b) => (format!("{}%{}", wrap(a, PRODUCT), wrap(b, UNARY)), PRODUCT),
        Expr::CeilDiv(a, b) => call("CeilToInt", &[a, b]),
        Expr::Max(xs) | Expr::Min(xs) if xs.len() == 1 => fmt(&xs[0]),
        Expr::Max(xs) => call("Max", &xs.iter().collect::<Vec<_>>()),
        Expr::Min(xs) => call("Min", &xs.iter().collect::<Vec<_>>()),
    }
}
