//! The simplifier: expression tree -> polynomial over atoms -> canonical tree.
//!
//! Every rewrite here must preserve the value for all bindings under which
//! the original evaluates without error. Rules for the division-like atoms,
//! with `b != 0` (the original errors otherwise) and any integer `Q`:
//!
//! - `(b*Q + R) // b == Q + R // b`, `CeilToInt(b*Q + R, b) == Q + CeilToInt(R, b)`,
//!   `(b*Q + R) % b == R % b`;
//! - `a // -b == (-a) // b`, `CeilToInt(a, -b) == CeilToInt(-a, b)`,
//!   `a % -b == -((-a) % b)`;
//! - for `g` dividing every coefficient of `a` and `b`:
//!   `a // b == (a/g) // (b/g)`, likewise `CeilToInt`, and
//!   `a % b == g * ((a/g) % (b/g))`;
//! - for a constant `d > 0`, coefficients of `a % d` may be reduced modulo `d`
//!   (to the representative closest to zero, so they never grow).

use super::poly::{divide_monomial, gcd, Poly};
use super::Expr;

/// The three division-like operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DivKind {
    Floor,
    Ceil,
    Mod,
}

/// Folds `x op y` with Python semantics; `None` when `y == 0` or on overflow.
pub(crate) fn fold_div(kind: DivKind, x: i128, y: i128) -> Option<i128> {
    let q = x.checked_div(y)?;
    let r = x.checked_rem(y)?;
    let differ = (r < 0) != (y < 0);
    match kind {
        DivKind::Floor if r != 0 && differ => q.checked_sub(1),
        DivKind::Ceil if r != 0 && !differ => q.checked_add(1),
        DivKind::Mod if r != 0 && differ => r.checked_add(y),
        DivKind::Floor | DivKind::Ceil => Some(q),
        DivKind::Mod => Some(r),
    }
}

fn fold_div_i64(kind: DivKind, x: i64, y: i64) -> Option<i64> {
    fold_div(kind, x.into(), y.into()).and_then(|v| i64::try_from(v).ok())
}

fn make_div(kind: DivKind, a: Expr, b: Expr) -> Expr {
    let (a, b) = (Box::new(a), Box::new(b));
    match kind {
        DivKind::Floor => Expr::FloorDiv(a, b),
        DivKind::Ceil => Expr::CeilDiv(a, b),
        DivKind::Mod => Expr::Mod(a, b),
    }
}

pub(crate) fn simplify(e: &Expr) -> Expr {
    match to_poly(e) {
        Some(p) => p.to_expr(),
        None => settle(fallback(e)).1,
    }
}

/// A fallback result whose polynomial no longer overflows (the overflow was
/// in literals that cancel) gets the canonical form after all.
fn settle(f: Expr) -> (Option<Poly>, Expr) {
    match to_poly(&f) {
        Some(p) => {
            let s = p.to_expr();
            (Some(p), s)
        }
        None => (None, f),
    }
}

/// The structural simplification used when folding a sum or product
/// overflows: children are simplified, nested sums (products) are spliced,
/// and integer literals are folded as far as possible without overflow.
/// Other terms are not combined.
fn fallback(e: &Expr) -> Expr {
    let (xs, is_add) = match e {
        Expr::Add(xs) => (xs, true),
        Expr::Mul(xs) => (xs, false),
        _ => return e.clone(),
    };
    let fold = |a: i64, b: i64| {
        if is_add {
            a.checked_add(b)
        } else {
            a.checked_mul(b)
        }
    };
    let mut consts: Vec<i64> = Vec::new();
    let mut others = Vec::new();
    for x in xs {
        let items = match (simplify(x), is_add) {
            (Expr::Add(inner), true) | (Expr::Mul(inner), false) => inner,
            (s, _) => vec![s],
        };
        for item in items {
            match item {
                Expr::Int(v) => consts.push(v),
                other => others.push(other),
            }
        }
    }
    // Fold each literal into the first earlier one it combines with, until
    // no two combine.
    loop {
        let before = consts.len();
        let mut merged: Vec<i64> = Vec::with_capacity(before);
        for v in consts {
            match merged.iter_mut().find_map(|m| fold(*m, v).map(|f| (m, f))) {
                Some((m, f)) => *m = f,
                None => merged.push(v),
            }
        }
        consts = merged;
        if consts.len() == before {
            break;
        }
    }
    let neutral = if is_add { 0 } else { 1 };
    consts.retain(|&c| c != neutral);
    let mut items: Vec<Expr> = if is_add {
        others
            .into_iter()
            .chain(consts.into_iter().map(Expr::Int))
            .collect()
    } else {
        consts.into_iter().map(Expr::Int).chain(others).collect()
    };
    match items.len() {
        0 => Expr::Int(neutral),
        1 => items.pop().unwrap_or(Expr::Int(neutral)),
        _ if is_add => Expr::Add(items),
        _ => Expr::Mul(items),
    }
}

/// A child's polynomial (`None` when it overflowed) and simplified form.
fn child(e: &Expr) -> (Option<Poly>, Expr) {
    match to_poly(e) {
        Some(p) => {
            let s = p.to_expr();
            (Some(p), s)
        }
        None => settle(fallback(e)),
    }
}

/// The polynomial of `e`, with non-polynomial sub-expressions simplified
/// into atoms; `None` when a sum or product overflows.
fn to_poly(e: &Expr) -> Option<Poly> {
    match e {
        Expr::Int(v) => Some(Poly::constant(*v)),
        Expr::Sym(_) => Some(Poly::atom(e.clone())),
        Expr::Add(xs) => {
            let mut acc = Poly::zero();
            for x in xs {
                acc = acc.add(&to_poly(x)?)?;
            }
            Some(acc)
        }
        Expr::Mul(xs) => {
            let mut acc = Poly::constant(1);
            for x in xs {
                acc = acc.mul(&to_poly(x)?)?;
            }
            Some(acc)
        }
        Expr::FloorDiv(a, b) => Some(div_like(DivKind::Floor, a, b)),
        Expr::CeilDiv(a, b) => Some(div_like(DivKind::Ceil, a, b)),
        Expr::Mod(a, b) => Some(div_like(DivKind::Mod, a, b)),
        Expr::Max(xs) => Some(extremum(true, xs)),
        Expr::Min(xs) => Some(extremum(false, xs)),
    }
}

fn div_like(kind: DivKind, a: &Expr, b: &Expr) -> Poly {
    let (pa, ea) = child(a);
    let (pb, eb) = child(b);
    let rules = match (pa, pb) {
        (Some(pa), Some(pb)) => div_rules(kind, &pa, &pb),
        _ => None,
    };
    rules.unwrap_or_else(|| Poly::atom(make_div(kind, ea, eb)))
}

/// Simplifies `pa op pb`; `None` (leave the atom as it is) on overflow.
fn div_rules(kind: DivKind, pa: &Poly, pb: &Poly) -> Option<Poly> {
    if pb.is_zero() {
        return Some(Poly::atom(make_div(kind, pa.to_expr(), Expr::Int(0))));
    }
    if let (Some(x), Some(y)) = (pa.as_const(), pb.as_const()) {
        return fold_div_i64(kind, x, y).map(Poly::constant);
    }
    let (_, lead) = pb.leading()?;
    if lead < 0 {
        let (na, nb) = (pa.neg()?, pb.neg()?);
        let r = div_rules(kind, &na, &nb)?;
        return match kind {
            DivKind::Mod => r.neg(),
            _ => Some(r),
        };
    }
    // Split pa = pb*q + r.
    let (q, r) = if let Some((m, c)) = pb.single_term() {
        let (mut q, mut r) = (Poly::zero(), Poly::zero());
        for (k, ca) in &pa.terms {
            match divide_monomial(k, m) {
                Some(rest) if ca.checked_rem(c)? == 0 => q.add_term(rest, ca.checked_div(c)?)?,
                _ => r.add_term(k.clone(), *ca)?,
            }
        }
        (q, r)
    } else if let Some(f) = pa.const_multiple_of(pb) {
        (Poly::constant(f), Poly::zero())
    } else {
        (Poly::zero(), pa.clone())
    };
    let rest = remainder_atom(kind, r, pb)?;
    match kind {
        DivKind::Mod => Some(rest),
        _ => q.add(&rest),
    }
}

/// The representative of `c` modulo `d > 0` closest to zero (the positive
/// one on a tie), so reducing never makes a coefficient larger.
fn symmetric_rem(c: i64, d: i64) -> i64 {
    let r = c.rem_euclid(d);
    if r > d - r {
        r - d
    } else {
        r
    }
}

/// `r op pb` where nothing more can be pulled out of `r`; `pb` is nonzero
/// with a positive leading coefficient.
fn remainder_atom(kind: DivKind, mut r: Poly, pb: &Poly) -> Option<Poly> {
    if kind == DivKind::Mod {
        if let Some(d) = pb.as_const() {
            let mut reduced = Poly::zero();
            for (k, c) in &r.terms {
                reduced.add_term(k.clone(), symmetric_rem(*c, d))?;
            }
            r = reduced;
        }
    }
    if r.is_zero() {
        return Some(Poly::zero());
    }
    if let (Some(x), Some(y)) = (r.as_const(), pb.as_const()) {
        return fold_div_i64(kind, x, y).map(Poly::constant);
    }
    let g = gcd(r.content(), pb.content());
    if g > 1 {
        let g = i64::try_from(g).ok()?;
        let (r, b) = (r.div_exact(g)?, pb.div_exact(g)?);
        let atom = Poly::atom(make_div(kind, r.to_expr(), b.to_expr()));
        return match kind {
            DivKind::Mod => atom.scale(g),
            _ => Some(atom),
        };
    }
    Some(Poly::atom(make_div(kind, r.to_expr(), pb.to_expr())))
}

/// `Max` (or `Min`) of the arguments: nested calls are flattened, constants
/// folded, and an argument is dropped when it differs from another by a
/// constant in the losing direction (so duplicates go too).
fn extremum(is_max: bool, xs: &[Expr]) -> Poly {
    let make = |args: Vec<Expr>| {
        if is_max {
            Expr::Max(args)
        } else {
            Expr::Min(args)
        }
    };
    if xs.is_empty() {
        return Poly::atom(make(Vec::new()));
    }
    let mut args: Vec<(Option<Poly>, Expr)> = Vec::new();
    for x in xs {
        let (p, e) = child(x);
        match e {
            Expr::Max(inner) if is_max => args.extend(inner.into_iter().map(|i| (to_poly(&i), i))),
            Expr::Min(inner) if !is_max => args.extend(inner.into_iter().map(|i| (to_poly(&i), i))),
            e => args.push((p, e)),
        }
    }
    let mut alive = vec![true; args.len()];
    for i in 0..args.len() {
        for j in i + 1..args.len() {
            if !alive[i] || !alive[j] {
                continue;
            }
            let diff = match (&args[i], &args[j]) {
                ((Some(pi), _), (Some(pj), _)) => match (pi.as_const(), pj.as_const()) {
                    (Some(ci), Some(cj)) => Some((ci.cmp(&cj)) as i64),
                    _ => pi.sub(pj).and_then(|d| d.as_const()),
                },
                ((None, ei), (None, ej)) if ei == ej => Some(0),
                _ => None,
            };
            if let Some(d) = diff {
                // d = arg_i - arg_j; keep the winner (arg_i on a tie).
                if (d >= 0) == is_max || d == 0 {
                    alive[j] = false;
                } else {
                    alive[i] = false;
                }
            }
        }
    }
    let mut kept: Vec<(Option<Poly>, Expr)> = args
        .into_iter()
        .zip(alive)
        .filter_map(|(a, keep)| keep.then_some(a))
        .collect();
    if kept.len() == 1 {
        let (p, e) = kept.pop().unwrap_or((None, Expr::Int(0)));
        return p.unwrap_or_else(|| Poly::atom(e));
    }
    let mut exprs: Vec<Expr> = kept.into_iter().map(|(_, e)| e).collect();
    exprs.sort();
    exprs.dedup();
    Poly::atom(make(exprs))
}
