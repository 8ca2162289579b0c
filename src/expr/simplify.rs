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

/// Why an expression has no polynomial form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// Folding a sum or product overflowed `i64` coefficients: the affected
    /// part is kept as it is (still exact, as evaluation is).
    Overflow,
    /// A division or modulo by a divisor that is zero whatever the symbols:
    /// the expression always fails, so nothing is cancelled or dropped
    /// (`N//0 - N//0` must not become `0`).
    ZeroDivisor,
}

type Simplified = Result<Poly, Stop>;

/// What simplifying one node gives. Each node is simplified once, bottom
/// up: a parent reuses its children's results (simplifying a child again
/// would cost time exponential in the depth).
enum Out {
    /// The node's polynomial.
    Poly(Poly),
    /// No polynomial: why, and the simplified tree.
    Stuck { stop: Stop, expr: Expr },
}

impl Out {
    fn expr(&self) -> Expr {
        match self {
            Out::Poly(p) => p.to_expr(),
            Out::Stuck { expr, .. } => expr.clone(),
        }
    }

    fn into_parts(self) -> (Simplified, Expr) {
        match self {
            Out::Poly(p) => {
                let e = p.to_expr();
                (Ok(p), e)
            }
            Out::Stuck { stop, expr, .. } => (Err(stop), expr),
        }
    }

    fn stop(&self) -> Option<Stop> {
        match self {
            Out::Poly(_) => None,
            Out::Stuck { stop, .. } => Some(*stop),
        }
    }

    fn stuck(stop: Stop, expr: Expr) -> Out {
        Out::Stuck { stop, expr }
    }
}

pub(crate) fn simplify(e: &Expr) -> Expr {
    match node(e) {
        Out::Poly(p) => p.to_expr(),
        Out::Stuck { expr, .. } => expr,
    }
}

/// A child's polynomial (or why it has none) and simplified form.
fn child(e: &Expr) -> (Simplified, Expr) {
    node(e).into_parts()
}

/// An expression without symbols whose folding overflowed `i64`: its exact
/// value when that fits (`Ok`), `Err(ZeroDivisor)` when it divides by zero,
/// `None` when it has symbols or its value does not fit.
fn exact_constant(e: &Expr) -> Option<Result<i64, Stop>> {
    if !e.symbols().is_empty() {
        return None;
    }
    match e.eval(&Default::default()) {
        Ok(v) => Some(Ok(v)),
        Err(err) if err.message == "integer overflow" => None,
        Err(_) => Some(Err(Stop::ZeroDivisor)),
    }
}

/// A stuck node after an overflow: folded by its exact value when it has
/// no symbols and that value fits.
fn settle_overflow(out: Out) -> Out {
    match &out {
        Out::Stuck {
            stop: Stop::Overflow,
            expr,
        } => match exact_constant(expr) {
            Some(Ok(v)) => Out::Poly(Poly::constant(v)),
            Some(Err(stop)) => Out::stuck(stop, expr.clone()),
            None => out,
        },
        _ => out,
    }
}

/// The sum of polynomials, adding terms in place (linear in their size).
fn sum(polys: &[Poly]) -> Option<Poly> {
    let mut acc = Poly::zero();
    for p in polys {
        for (k, c) in &p.terms {
            acc.add_term(k.clone(), *c)?;
        }
    }
    Some(acc)
}

/// The product of polynomials: single-term factors are multiplied by
/// collecting their atoms and sorting once, then the sums are multiplied.
fn product(polys: &[Poly]) -> Option<Poly> {
    if polys.iter().any(Poly::is_zero) {
        return Some(Poly::zero());
    }
    let mut coef: i64 = 1;
    let mut atoms: Vec<Expr> = Vec::new();
    let mut sums: Vec<&Poly> = Vec::new();
    for p in polys {
        match p.single_term() {
            Some((k, c)) => {
                coef = coef.checked_mul(c)?;
                atoms.extend(k.iter().cloned());
            }
            None => sums.push(p),
        }
    }
    atoms.sort();
    let mut acc = Poly::zero();
    acc.add_term(atoms, coef)?;
    for p in sums {
        acc = acc.mul(p)?;
    }
    Some(acc)
}

/// Simplifies one node, its children once each.
fn node(e: &Expr) -> Out {
    match e {
        Expr::Int(v) => Out::Poly(Poly::constant(*v)),
        Expr::Sym(_) => Out::Poly(Poly::atom(e.clone())),
        Expr::Add(xs) => settle_overflow(sum_or_product(true, xs)),
        Expr::Mul(xs) => settle_overflow(sum_or_product(false, xs)),
        Expr::FloorDiv(a, b) => div_like(DivKind::Floor, a, b),
        Expr::CeilDiv(a, b) => div_like(DivKind::Ceil, a, b),
        Expr::Mod(a, b) => div_like(DivKind::Mod, a, b),
        Expr::Max(xs) => extremum(true, xs),
        Expr::Min(xs) => extremum(false, xs),
    }
}

fn sum_or_product(is_add: bool, xs: &[Expr]) -> Out {
    let outs: Vec<Out> = xs.iter().map(node).collect();
    // a zero divisor anywhere decides; exact values make a zero factor win
    // over an overflow elsewhere
    let stop = if outs.iter().any(|o| o.stop() == Some(Stop::ZeroDivisor)) {
        Some(Stop::ZeroDivisor)
    } else if !is_add
        && outs
            .iter()
            .any(|o| matches!(o, Out::Poly(p) if p.is_zero()))
    {
        return Out::Poly(Poly::zero());
    } else if outs.iter().any(|o| o.stop().is_some()) {
        Some(Stop::Overflow)
    } else {
        None
    };
    if stop.is_none() {
        let polys: Vec<Poly> = outs
            .iter()
            .filter_map(|o| match o {
                Out::Poly(p) => Some(p.clone()),
                Out::Stuck { .. } => None,
            })
            .collect();
        let combined = if is_add { sum(&polys) } else { product(&polys) };
        if let Some(p) = combined {
            return Out::Poly(p);
        }
    }
    stuck_sum_or_product(is_add, stop.unwrap_or(Stop::Overflow), outs)
}

/// A sum (product) without a polynomial: the items that have one are
/// combined into one polynomial (when that does not overflow), and the
/// others follow it unchanged; nested sums (products) are spliced (their
/// items looked at once more, which costs their size per level of nesting,
/// never more).
fn stuck_sum_or_product(is_add: bool, stop: Stop, outs: Vec<Out>) -> Out {
    let neutral = if is_add {
        Poly::zero()
    } else {
        Poly::constant(1)
    };
    let mut poly = Some(neutral.clone());
    let mut rest: Vec<Expr> = Vec::new();
    // every item, for the overflow path
    let mut items: Vec<Expr> = Vec::new();
    let mut take = |o: Out, poly: &mut Option<Poly>, rest: &mut Vec<Expr>| match o {
        Out::Poly(p) => {
            items.push(p.to_expr());
            *poly = poly
                .take()
                .and_then(|acc| if is_add { acc.add(&p) } else { acc.mul(&p) });
        }
        Out::Stuck { expr, .. } => {
            items.push(expr.clone());
            rest.push(expr);
        }
    };
    for o in outs {
        match o {
            Out::Stuck {
                expr: Expr::Add(v), ..
            } if is_add => v.iter().for_each(|x| take(node(x), &mut poly, &mut rest)),
            Out::Stuck {
                expr: Expr::Mul(v), ..
            } if !is_add => v.iter().for_each(|x| take(node(x), &mut poly, &mut rest)),
            o => take(o, &mut poly, &mut rest),
        }
    }
    let make = |v: Vec<Expr>| match v.len() {
        0 => Expr::Int(if is_add { 0 } else { 1 }),
        1 => v.into_iter().next().unwrap_or(Expr::Int(0)),
        _ if is_add => Expr::Add(v),
        _ => Expr::Mul(v),
    };
    let expr = match poly {
        Some(p) => {
            let mut out = Vec::with_capacity(rest.len() + 1);
            if p != neutral {
                match (p.to_expr(), is_add) {
                    (Expr::Add(v), true) | (Expr::Mul(v), false) => out.extend(v),
                    (x, _) => out.push(x),
                }
            }
            out.extend(rest);
            make(out)
        }
        None => make(fold_literals(is_add, items)),
    };
    Out::stuck(stop, expr)
}

fn div_like(kind: DivKind, a: &Expr, b: &Expr) -> Out {
    let (oa, ob) = (node(a), node(b));
    let (ea, eb) = (oa.expr(), ob.expr());
    if oa.stop() == Some(Stop::ZeroDivisor)
        || ob.stop() == Some(Stop::ZeroDivisor)
        || matches!(&ob, Out::Poly(pb) if pb.is_zero())
    {
        return Out::stuck(Stop::ZeroDivisor, make_div(kind, ea, eb));
    }
    // a divisor without symbols that is not a plain literal (constants
    // beyond i64 inside): its exact value says whether it is zero
    if !matches!(&ob, Out::Poly(pb) if pb.as_const().is_some())
        && eb.symbols().is_empty()
        && matches!(exact_constant(&eb), Some(Ok(0)) | Some(Err(_)))
    {
        return Out::stuck(Stop::ZeroDivisor, make_div(kind, ea, eb));
    }
    // (x//b)//c is x//(b*c) for positive constants b and c
    if let (DivKind::Floor, Expr::FloorDiv(x, inner), Some(c)) = (kind, &ea, ob.expr().as_int()) {
        if let Some(b) = inner.as_int() {
            if let Some(bc) = b.checked_mul(c).filter(|_| b > 0 && c > 0) {
                return div_like(DivKind::Floor, x, &Expr::Int(bc));
            }
        }
    }
    match (oa, ob) {
        (Out::Poly(pa), Out::Poly(pb)) if pa.as_const().is_some() && pb.as_const().is_some() => {
            match div_rules(kind, &pa, &pb) {
                Some(p) => Out::Poly(p),
                None => exact_or_atom(make_div(kind, ea, eb)),
            }
        }
        // constants beyond i64 inside (no symbols): the exact value decides
        _ if ea.symbols().is_empty() && eb.symbols().is_empty() => {
            exact_or_atom(make_div(kind, ea, eb))
        }
        (Out::Poly(pa), Out::Poly(pb)) => Out::Poly(
            div_rules(kind, &pa, &pb).unwrap_or_else(|| Poly::atom(make_div(kind, ea, eb))),
        ),
        _ => Out::Poly(Poly::atom(make_div(kind, ea, eb))),
    }
}

/// A division without symbols: its exact value when that fits `i64`, an
/// error kept when it divides by zero, else the atom itself.
fn exact_or_atom(d: Expr) -> Out {
    match exact_constant(&d) {
        Some(Ok(v)) => Out::Poly(Poly::constant(v)),
        Some(Err(stop)) => Out::stuck(stop, d),
        None => Out::Poly(Poly::atom(d)),
    }
}

/// The overflow path of a sum (product): integer literals are folded as
/// far as possible without overflow; other items are not combined.
fn fold_literals(is_add: bool, items: Vec<Expr>) -> Vec<Expr> {
    let fold = |a: i64, b: i64| {
        if is_add {
            a.checked_add(b)
        } else {
            a.checked_mul(b)
        }
    };
    let mut consts: Vec<i64> = Vec::new();
    let mut others = Vec::new();
    for item in items {
        match item {
            Expr::Int(v) => consts.push(v),
            other => others.push(other),
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
    if is_add {
        others
            .into_iter()
            .chain(consts.into_iter().map(Expr::Int))
            .collect()
    } else {
        consts.into_iter().map(Expr::Int).chain(others).collect()
    }
}

/// Simplifies `pa op pb`; `None` (leave the atom as it is) on overflow.
fn div_rules(kind: DivKind, pa: &Poly, pb: &Poly) -> Option<Poly> {
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

/// `a - b` when it is a constant, computed exactly (so the answer does not
/// depend on which of the two comes first).
fn const_difference(a: &Poly, b: &Poly) -> Option<i128> {
    let same = |x: &Poly, y: &Poly| {
        x.terms
            .iter()
            .all(|(k, c)| k.is_empty() || y.terms.get(k) == Some(c))
    };
    if !same(a, b) || !same(b, a) {
        return None;
    }
    let constant = |p: &Poly| i128::from(p.terms.get(&Vec::new()).copied().unwrap_or(0));
    Some(constant(a) - constant(b))
}

/// `Max` (or `Min`) of the arguments: nested calls are flattened, constants
/// folded, and an argument is dropped when it differs from another by a
/// constant in the losing direction (so duplicates go too).
fn extremum(is_max: bool, xs: &[Expr]) -> Out {
    let make = |args: Vec<Expr>| {
        if is_max {
            Expr::Max(args)
        } else {
            Expr::Min(args)
        }
    };
    if xs.is_empty() {
        return Out::Poly(Poly::atom(make(Vec::new())));
    }
    let outs: Vec<Out> = xs.iter().map(node).collect();
    if outs.iter().any(|o| o.stop() == Some(Stop::ZeroDivisor)) {
        return Out::stuck(
            Stop::ZeroDivisor,
            make(outs.iter().map(Out::expr).collect()),
        );
    }
    // constants beyond i64 inside and no symbols: the exact value decides
    if outs.iter().any(|o| o.stop().is_some()) {
        let whole = make(outs.iter().map(Out::expr).collect());
        if whole.symbols().is_empty() {
            return exact_or_atom(whole);
        }
    }
    let mut args: Vec<(Option<Poly>, Expr)> = Vec::new();
    for o in outs {
        let (p, e) = o.into_parts();
        match e {
            Expr::Max(inner) if is_max => {
                args.extend(inner.into_iter().map(|i| (child(&i).0.ok(), i)))
            }
            Expr::Min(inner) if !is_max => {
                args.extend(inner.into_iter().map(|i| (child(&i).0.ok(), i)))
            }
            e => args.push((p.ok(), e)),
        }
    }
    let mut alive = vec![true; args.len()];
    for i in 0..args.len() {
        for j in i + 1..args.len() {
            if !alive[i] || !alive[j] {
                continue;
            }
            let diff = match (&args[i], &args[j]) {
                ((Some(pi), _), (Some(pj), _)) => const_difference(pi, pj),
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
        return Out::Poly(p.unwrap_or_else(|| Poly::atom(e)));
    }
    let mut exprs: Vec<Expr> = kept.into_iter().map(|(_, e)| e).collect();
    exprs.sort();
    exprs.dedup();
    Out::Poly(Poly::atom(make(exprs)))
}
