//! Polynomials over opaque atoms, the working form of the simplifier.
//!
//! A [`Poly`] maps a monomial (a sorted list of atoms, repeated for powers;
//! the empty list is the constant term) to a nonzero `i64` coefficient. All
//! arithmetic is checked and returns `None` on overflow.

use super::Expr;
use std::collections::BTreeMap;

/// A sorted multiset of atoms.
pub(crate) type Monomial = Vec<Expr>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Poly {
    pub terms: BTreeMap<Monomial, i64>,
}

pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Product of two sorted monomials (a sorted merge).
fn merge(a: &[Expr], b: &[Expr]) -> Monomial {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i].clone());
            i += 1;
        } else {
            out.push(b[j].clone());
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `k / m` when the multiset `m` is contained in `k`.
pub(crate) fn divide_monomial(k: &[Expr], m: &[Expr]) -> Option<Monomial> {
    let mut out = Vec::with_capacity(k.len());
    let mut j = 0;
    for x in k {
        if j < m.len() && *x == m[j] {
            j += 1;
        } else {
            if j < m.len() && m[j] < *x {
                return None;
            }
            out.push(x.clone());
        }
    }
    (j == m.len()).then_some(out)
}

impl Poly {
    pub fn zero() -> Poly {
        Poly::default()
    }

    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::zero();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    /// The polynomial consisting of the single atom `a` with coefficient 1.
    pub fn atom(a: Expr) -> Poly {
        let mut p = Poly::zero();
        p.terms.insert(vec![a], 1);
        p
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value when the polynomial is a constant (zero included).
    pub fn as_const(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// The only term, when there is exactly one.
    pub fn single_term(&self) -> Option<(&Monomial, i64)> {
        if self.terms.len() == 1 {
            self.terms.iter().next().map(|(k, c)| (k, *c))
        } else {
            None
        }
    }

    /// The first term in monomial order.
    pub fn leading(&self) -> Option<(&Monomial, i64)> {
        self.terms.iter().next().map(|(k, c)| (k, *c))
    }

    pub fn add_term(&mut self, k: Monomial, c: i64) -> Option<()> {
        if c == 0 {
            return Some(());
        }
        match self.terms.get_mut(&k) {
            Some(old) => {
                let s = old.checked_add(c)?;
                if s == 0 {
                    self.terms.remove(&k);
                } else {
                    *old = s;
                }
            }
            None => {
                self.terms.insert(k, c);
            }
        }
        Some(())
    }

    pub fn add(&self, o: &Poly) -> Option<Poly> {
        let mut out = self.clone();
        for (k, c) in &o.terms {
            out.add_term(k.clone(), *c)?;
        }
        Some(out)
    }

    pub fn scale(&self, f: i64) -> Option<Poly> {
        if f == 0 {
            return Some(Poly::zero());
        }
        let mut out = Poly::zero();
        for (k, c) in &self.terms {
            out.terms.insert(k.clone(), c.checked_mul(f)?);
        }
        Some(out)
    }

    pub fn neg(&self) -> Option<Poly> {
        self.scale(-1)
    }

    pub fn mul(&self, o: &Poly) -> Option<Poly> {
        let mut out = Poly::zero();
        for (ka, ca) in &self.terms {
            for (kb, cb) in &o.terms {
                out.add_term(merge(ka, kb), ca.checked_mul(*cb)?)?;
            }
        }
        Some(out)
    }

    /// The gcd of the absolute values of the coefficients (0 for zero).
    pub fn content(&self) -> u64 {
        self.terms.values().fold(0, |g, c| gcd(g, c.unsigned_abs()))
    }

    /// Divides every coefficient by `d`, which must divide them all.
    pub fn div_exact(&self, d: i64) -> Option<Poly> {
        let mut out = Poly::zero();
        for (k, c) in &self.terms {
            out.terms.insert(k.clone(), c.checked_div(d)?);
        }
        Some(out)
    }

    /// `Some(k)` when `self == k * o` for a constant `k` (`o` nonzero).
    pub fn const_multiple_of(&self, o: &Poly) -> Option<i64> {
        if self.is_zero() {
            return Some(0);
        }
        let (k, cb) = o.leading()?;
        let ca = *self.terms.get(k)?;
        if ca.checked_rem(cb)? != 0 {
            return None;
        }
        let f = ca.checked_div(cb)?;
        (o.scale(f)? == *self).then_some(f)
    }

    /// The canonical expression: terms with positive coefficients, then
    /// negative ones (each group in monomial order), then the constant. When
    /// the constant is positive and no other term is, it goes first
    /// (`1-N`).
    pub fn to_expr(&self) -> Expr {
        let term = |k: &Monomial, c: i64| -> Expr {
            if k.is_empty() {
                Expr::Int(c)
            } else if c == 1 && k.len() == 1 {
                k[0].clone()
            } else {
                let mut fs = Vec::with_capacity(k.len() + 1);
                if c != 1 {
                    fs.push(Expr::Int(c));
                }
                fs.extend(k.iter().cloned());
                Expr::Mul(fs)
            }
        };
        let constant = self.terms.get(&Vec::new()).copied();
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        for (k, c) in self.terms.iter().filter(|(k, _)| !k.is_empty()) {
            if *c > 0 {
                pos.push(term(k, *c));
            } else {
                neg.push(term(k, *c));
            }
        }
        let mut terms = Vec::with_capacity(self.terms.len());
        match constant {
            Some(c) if c > 0 && pos.is_empty() => {
                terms.push(Expr::Int(c));
                terms.extend(neg);
            }
            Some(c) => {
                terms.extend(pos);
                terms.extend(neg);
                terms.push(Expr::Int(c));
            }
            None => {
                terms.extend(pos);
                terms.extend(neg);
            }
        }
        match terms.len() {
            0 => Expr::Int(0),
            1 => terms.pop().unwrap_or(Expr::Int(0)),
            _ => Expr::Add(terms),
        }
    }
}
