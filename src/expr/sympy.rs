//! Dimensions declared in sympy's syntax, as onnxruntime's
//! SymbolicShapeInference (and exports that ran it, e.g. YOLOv8) write
//! them: `floor(height/2 - 1/2) + 1`, `ceiling(N/4)`, `Max(a, b)`,
//! `Mod(a, 2)`, `2*N**2`.
//!
//! sympy divides exactly (`/` gives a rational) and rounds only in
//! `floor`/`ceiling`. Each subexpression is therefore read as a fraction
//! `num / den` of two of our expressions; `floor(p/q)` becomes `p // q`,
//! `ceiling(p/q)` becomes `CeilToInt(p, q)`, and a dimension must end with
//! denominator 1. Anything else (a float, a relation, an unknown function,
//! a fraction left over) is not a dimension: [`from_sympy`] gives `None`.

use super::Expr;

/// How deeply parentheses and calls may nest.
const MAX_DEPTH: usize = 64;

/// Reads a sympy expression as a dimension, or `None`.
pub fn from_sympy(text: &str) -> Option<Expr> {
    let mut p = P {
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let f = p.sum()?;
    p.ws();
    if p.pos != p.b.len() {
        return None;
    }
    f.whole()
}

/// `num / den`, `den` never zero when constant.
#[derive(Clone, Debug)]
struct Frac {
    num: Expr,
    den: Expr,
}

impl Frac {
    fn int(e: Expr) -> Frac {
        Frac {
            num: e,
            den: Expr::int(1),
        }
    }

    /// The value when the denominator is 1 (or divides out).
    fn whole(&self) -> Option<Expr> {
        match self.den.as_int() {
            Some(1) => Some(self.num.clone()),
            Some(d) if d != 0 => {
                let q = self.num.floor_div(&self.den);
                // exact only when the division leaves no remainder
                (q.mul(&self.den).sub(&self.num).as_int() == Some(0)).then_some(q)
            }
            _ => None,
        }
    }

    fn add(&self, o: &Frac, sign: i64) -> Option<Frac> {
        let o_num = o.num.mul(&Expr::int(sign));
        match (self.den.as_int(), o.den.as_int()) {
            (Some(a), Some(b)) => {
                let l = lcm(a, b)?;
                Some(Frac {
                    num: self
                        .num
                        .mul(&Expr::int(l / a))
                        .add(&o_num.mul(&Expr::int(l / b))),
                    den: Expr::int(l),
                })
            }
            _ if self.den == o.den => Some(Frac {
                num: self.num.add(&o_num),
                den: self.den.clone(),
            }),
            _ => Some(Frac {
                num: self.num.mul(&o.den).add(&o_num.mul(&self.den)),
                den: self.den.mul(&o.den),
            }),
        }
    }

    fn mul(&self, o: &Frac) -> Frac {
        Frac {
            num: self.num.mul(&o.num),
            den: self.den.mul(&o.den),
        }
        .reduced()
    }

    fn div(&self, o: &Frac) -> Option<Frac> {
        if o.num.as_int() == Some(0) {
            return None;
        }
        let (num, den) = match o.num.as_int() {
            // keep the denominator positive
            Some(v) if v < 0 => (self.num.mul(&o.den).neg(), self.den.mul(&o.num).neg()),
            _ => (self.num.mul(&o.den), self.den.mul(&o.num)),
        };
        Some(Frac { num, den }.reduced())
    }

    /// Cancels a common integer factor when both parts are constants or
    /// the denominator divides every coefficient.
    fn reduced(self) -> Frac {
        if let (Some(n), Some(d)) = (self.num.as_int(), self.den.as_int()) {
            let g = gcd(n, d);
            if g > 1 {
                return Frac {
                    num: Expr::int(n / g),
                    den: Expr::int(d / g),
                };
            }
        }
        if self.den.as_int().is_some() {
            if let Some(w) = self.whole() {
                return Frac::int(w);
            }
        }
        self
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1)
}

fn lcm(a: i64, b: i64) -> Option<i64> {
    let g = gcd(a, b);
    if g == 0 {
        return None;
    }
    (a / g).checked_mul(b)
}

struct P<'a> {
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.pos < self.b.len() && self.b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.b[self.pos..].starts_with(s.as_bytes()) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn sum(&mut self) -> Option<Frac> {
        self.enter()?;
        let mut acc = self.product()?;
        loop {
            if self.eat("+") {
                acc = acc.add(&self.product()?, 1)?;
            } else if self.eat("-") {
                acc = acc.add(&self.product()?, -1)?;
            } else {
                break;
            }
        }
        self.depth -= 1;
        Some(acc)
    }

    fn product(&mut self) -> Option<Frac> {
        let mut acc = self.unary()?;
        loop {
            self.ws();
            if self.b[self.pos..].starts_with(b"**") {
                // handled in `power`; a dangling `**` is an error there
                return None;
            }
            if self.eat("*") {
                acc = acc.mul(&self.unary()?);
            } else if self.eat("/") {
                acc = acc.div(&self.unary()?)?;
            } else {
                return Some(acc);
            }
        }
    }

    fn unary(&mut self) -> Option<Frac> {
        if self.eat("-") {
            self.enter()?;
            let f = self.unary()?;
            self.depth -= 1;
            return Some(Frac {
                num: f.num.neg(),
                den: f.den,
            });
        }
        if self.eat("+") {
            self.enter()?;
            let f = self.unary();
            self.depth -= 1;
            return f;
        }
        self.power()
    }

    fn power(&mut self) -> Option<Frac> {
        let base = self.atom()?;
        if !self.eat("**") {
            return Some(base);
        }
        self.ws();
        let start = self.pos;
        while self.pos < self.b.len() && self.b[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let k: u32 = std::str::from_utf8(&self.b[start..self.pos])
            .ok()?
            .parse()
            .ok()?;
        if k > 64 {
            return None;
        }
        let mut acc = Frac::int(Expr::int(1));
        for _ in 0..k {
            acc = acc.mul(&base);
        }
        Some(acc)
    }

    fn atom(&mut self) -> Option<Frac> {
        self.ws();
        let c = *self.b.get(self.pos)?;
        if c == b'(' {
            self.pos += 1;
            let f = self.sum()?;
            return self.eat(")").then_some(f);
        }
        if c.is_ascii_digit() {
            let start = self.pos;
            while self.pos < self.b.len() && self.b[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
            if matches!(self.b.get(self.pos), Some(b'.' | b'e' | b'E')) {
                return None; // a float is not a dimension
            }
            let v: i64 = std::str::from_utf8(&self.b[start..self.pos])
                .ok()?
                .parse()
                .ok()?;
            return Some(Frac::int(Expr::int(v)));
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            return None;
        }
        let start = self.pos;
        while self.pos < self.b.len()
            && (self.b[self.pos].is_ascii_alphanumeric() || self.b[self.pos] == b'_')
        {
            self.pos += 1;
        }
        let name = std::str::from_utf8(&self.b[start..self.pos]).ok()?;
        if !self.eat("(") {
            return Some(Frac::int(Expr::sym(name)));
        }
        self.enter()?;
        let mut args = vec![self.sum()?];
        while self.eat(",") {
            args.push(self.sum()?);
        }
        if !self.eat(")") {
            return None;
        }
        self.depth -= 1;
        let whole = |args: &[Frac]| args.iter().map(Frac::whole).collect::<Option<Vec<_>>>();
        let e = match (name, args.as_slice()) {
            (_, [f]) if f.den.as_int() == Some(0) => return None,
            ("floor", [f]) => f.num.floor_div(&f.den),
            ("ceiling" | "ceil", [f]) => f.num.ceil_div(&f.den),
            ("Mod", [_, _]) => {
                let w = whole(&args)?;
                w[0].modulo(&w[1])
            }
            ("Max" | "max", [_, ..]) => Expr::Max(whole(&args)?).simplify(),
            ("Min" | "min", [_, ..]) => Expr::Min(whole(&args)?).simplify(),
            _ => return None,
        };
        Some(Frac::int(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Bindings;

    fn ev(e: &Expr, pairs: &[(&str, i64)]) -> i64 {
        let b: Bindings = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        e.eval(&b).unwrap()
    }

    #[test]
    fn yolo_style_dims() {
        let e = from_sympy("floor(height/2 - 1/2) + 1").unwrap();
        for h in 1..40 {
            // sympy: floor(h/2 - 1/2) + 1
            let want = ((h as f64) / 2.0 - 0.5).floor() as i64 + 1;
            assert_eq!(ev(&e, &[("height", h)]), want, "h = {h}: {e}");
        }
        let e = from_sympy("ceiling(N/4)").unwrap();
        assert_eq!(ev(&e, &[("N", 9)]), 3);
        let e = from_sympy("2*N**2 + Max(a, 3) - Mod(b, 2)").unwrap();
        assert_eq!(ev(&e, &[("N", 3), ("a", 1), ("b", 5)]), 18 + 3 - 1);
        let e = from_sympy("floor((width - 3)/2) + 1").unwrap();
        assert_eq!(ev(&e, &[("width", 224)]), 111);
        // exact halves add up to a whole
        let e = from_sympy("N/2 + N/2").unwrap();
        assert_eq!(e, Expr::sym("N"));
        let e = from_sympy("-(1 - N)").unwrap();
        assert_eq!(ev(&e, &[("N", 5)]), 4);
    }

    #[test]
    fn what_is_not_a_dimension() {
        for s in [
            "N/2",
            "0.5*N",
            "N > 2",
            "sqrt(N)",
            "floor(N",
            "N**N",
            "1/0",
            "",
            "?",
            "floor(N/0)",
        ] {
            assert!(from_sympy(s).is_none(), "{s}");
        }
        // deep nesting is refused, not a stack overflow
        let deep = format!("{}N{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(from_sympy(&deep).is_none());
        let deep = format!("{}N", "-".repeat(100_000));
        assert!(from_sympy(&deep).is_none());
    }
}
