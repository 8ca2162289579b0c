//! Tokenizer and recursive-descent parser for the expression syntax.
//!
//! Grammar (Python precedence, all binary operators left associative):
//!
//! ```text
//! sum     := product (('+' | '-') product)*
//! product := unary (('*' | '//' | '%') unary)*
//! unary   := ('-' | '+') unary | primary
//! primary := INT | IDENT | IDENT '(' sum (',' sum)* ')' | '(' sum ')'
//! ```
//!
//! The parser returns the raw tree; [`super::Expr::parse`] simplifies it.

use super::{Expr, ExprError};

/// Deepest nesting accepted (parentheses, unary minus and chained `//`/`%`
/// count), to keep the recursive passes over the tree far from the stack
/// limit.
const MAX_DEPTH: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Num(u64),
    Ident(String),
    Plus,
    Minus,
    Star,
    SlashSlash,
    Percent,
    LParen,
    RParen,
    Comma,
    End,
}

struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

fn tokenize(text: &str) -> Result<Vec<Token>, ExprError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let tok = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'0'..=b'9' => {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let v = text[start..i]
                    .parse::<u64>()
                    .map_err(|_| ExprError::at("integer literal too large", start))?;
                out.push(Token {
                    tok: Tok::Num(v),
                    start,
                    end: i,
                });
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                // converters write dotted symbols (`p2o.DynamicDimension.0`):
                // a dot between name characters belongs to the name
                let name_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
                while i < bytes.len()
                    && (name_char(bytes[i])
                        || (bytes[i] == b'.' && bytes.get(i + 1).is_some_and(|&b| name_char(b))))
                {
                    i += 1;
                }
                out.push(Token {
                    tok: Tok::Ident(text[start..i].to_string()),
                    start,
                    end: i,
                });
                continue;
            }
            b'"' => {
                // a quoted symbol: any name, `\"` and `\\` escaped
                let mut name = String::new();
                let mut chars = text[start + 1..].char_indices();
                let mut closed = None;
                while let Some((k, ch)) = chars.next() {
                    match ch {
                        '"' => {
                            closed = Some(start + 1 + k + 1);
                            break;
                        }
                        '\\' => match chars.next() {
                            Some((_, e)) => name.push(e),
                            None => break,
                        },
                        c => name.push(c),
                    }
                }
                let end = closed.ok_or_else(|| ExprError::at("unclosed quoted name", start))?;
                if name.is_empty() {
                    return Err(ExprError::at("empty quoted name", start));
                }
                i = end;
                out.push(Token {
                    tok: Tok::Ident(name),
                    start,
                    end,
                });
                continue;
            }
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'*' => Tok::Star,
            b'%' => Tok::Percent,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b',' => Tok::Comma,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += 1;
                Tok::SlashSlash
            }
            b'/' => {
                return Err(ExprError::at(
                    "unexpected character '/' (division is '//')",
                    start,
                ))
            }
            _ => {
                let ch = text[start..].chars().next().unwrap_or('?');
                return Err(ExprError::at(format!("unexpected character '{ch}'"), start));
            }
        };
        i += 1;
        out.push(Token { tok, start, end: i });
    }
    out.push(Token {
        tok: Tok::End,
        start: text.len(),
        end: text.len(),
    });
    Ok(out)
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].tok
    }

    fn pos(&self) -> usize {
        self.toks[self.i].start
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.i].tok.clone();
        if t != Tok::End {
            self.i += 1;
        }
        t
    }

    fn unexpected(&self) -> ExprError {
        let t = &self.toks[self.i];
        match t.tok {
            Tok::End => ExprError::at("unexpected end of input", t.start),
            _ => ExprError::at(
                format!("unexpected token '{}'", &self.text[t.start..t.end]),
                t.start,
            ),
        }
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::at("expression nested too deeply", self.pos()));
        }
        Ok(())
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        let mut terms = vec![self.product()?];
        loop {
            match self.peek() {
                Tok::Plus => {
                    self.bump();
                    terms.push(self.product()?);
                }
                Tok::Minus => {
                    self.bump();
                    let t = self.product()?;
                    terms.push(Expr::Mul(vec![Expr::Int(-1), t]));
                }
                _ => break,
            }
        }
        Ok(if terms.len() == 1 {
            terms.pop().unwrap_or(Expr::Int(0))
        } else {
            Expr::Add(terms)
        })
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        let collapse = |mut fs: Vec<Expr>| {
            if fs.len() == 1 {
                fs.pop().unwrap_or(Expr::Int(1))
            } else {
                Expr::Mul(fs)
            }
        };
        let mut factors = vec![self.unary()?];
        let mut chain = 0;
        loop {
            match self.peek() {
                Tok::Star => {
                    self.bump();
                    factors.push(self.unary()?);
                }
                Tok::SlashSlash | Tok::Percent => {
                    // Each division nests the tree one level deeper.
                    self.enter()?;
                    chain += 1;
                    let is_mod = self.bump() == Tok::Percent;
                    let lhs = Box::new(collapse(std::mem::take(&mut factors)));
                    let rhs = Box::new(self.unary()?);
                    factors.push(if is_mod {
                        Expr::Mod(lhs, rhs)
                    } else {
                        Expr::FloorDiv(lhs, rhs)
                    });
                }
                _ => break,
            }
        }
        self.depth -= chain;
        Ok(collapse(factors))
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        self.enter()?;
        let e = match self.peek() {
            Tok::Minus => {
                self.bump();
                if let Tok::Num(v) = *self.peek() {
                    // A negated literal, so that i64::MIN can be written.
                    let pos = self.pos();
                    self.bump();
                    let v = i64::try_from(-i128::from(v))
                        .map_err(|_| ExprError::at("integer literal too large", pos))?;
                    Expr::Int(v)
                } else {
                    Expr::Mul(vec![Expr::Int(-1), self.unary()?])
                }
            }
            Tok::Plus => {
                self.bump();
                self.unary()?
            }
            _ => self.primary()?,
        };
        self.depth -= 1;
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Num(v) => {
                self.bump();
                let v = i64::try_from(v)
                    .map_err(|_| ExprError::at("integer literal too large", pos))?;
                Ok(Expr::Int(v))
            }
            Tok::Ident(name) => {
                self.bump();
                if *self.peek() == Tok::LParen {
                    self.call(&name, pos)
                } else {
                    Ok(Expr::Sym(name))
                }
            }
            Tok::LParen => {
                self.bump();
                let e = self.sum()?;
                self.expect_rparen()?;
                Ok(e)
            }
            _ => Err(self.unexpected()),
        }
    }

    fn expect_rparen(&mut self) -> Result<(), ExprError> {
        if *self.peek() == Tok::RParen {
            self.bump();
            Ok(())
        } else {
            let mut e = self.unexpected();
            e.message.push_str(", expected ')'");
            Err(e)
        }
    }

    fn call(&mut self, name: &str, pos: usize) -> Result<Expr, ExprError> {
        const FUNCTIONS: [&str; 3] = ["CeilToInt", "Max", "Min"];
        if !FUNCTIONS.contains(&name) {
            let hint = match FUNCTIONS.iter().find(|f| f.eq_ignore_ascii_case(name)) {
                Some(f) => format!("; did you mean '{f}'?"),
                None => format!(" (functions: {})", FUNCTIONS.join(", ")),
            };
            return Err(ExprError::at(
                format!("unknown function '{name}'{hint}"),
                pos,
            ));
        }
        self.bump(); // '('
        let mut args = Vec::new();
        if *self.peek() != Tok::RParen {
            args.push(self.sum()?);
            while *self.peek() == Tok::Comma {
                self.bump();
                args.push(self.sum()?);
            }
        }
        self.expect_rparen()?;
        match name {
            "CeilToInt" => {
                if args.len() != 2 {
                    return Err(ExprError::at(
                        format!("CeilToInt expects 2 arguments, got {}", args.len()),
                        pos,
                    ));
                }
                let b = args.pop().unwrap_or(Expr::Int(1));
                let a = args.pop().unwrap_or(Expr::Int(0));
                Ok(Expr::CeilDiv(Box::new(a), Box::new(b)))
            }
            _ => {
                if args.len() < 2 {
                    return Err(ExprError::at(
                        format!("{name} expects at least 2 arguments, got {}", args.len()),
                        pos,
                    ));
                }
                Ok(if name == "Max" {
                    Expr::Max(args)
                } else {
                    Expr::Min(args)
                })
            }
        }
    }
}

/// Parses `text` into an unsimplified tree.
pub(crate) fn parse_raw(text: &str) -> Result<Expr, ExprError> {
    let toks = tokenize(text)?;
    let mut p = Parser {
        text,
        toks,
        i: 0,
        depth: 0,
    };
    let e = p.sum()?;
    if *p.peek() != Tok::End {
        return Err(p.unexpected());
    }
    Ok(e)
}
