//! Tokenizer (`nom` recognisers for numbers, names, quoted names and
//! punctuation) and recursive-descent parser for the expression syntax.
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
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{anychar, char, digit1, multispace0, none_of, satisfy};
use nom::combinator::{recognize, value};
use nom::multi::{fold_many0, many0_count};
use nom::sequence::{pair, preceded, tuple};
use nom::IResult;

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

/// The punctuation tokens, longest first (`//` before a lone `/`).
fn punctuation(input: &str) -> IResult<&str, Tok> {
    alt((
        value(Tok::SlashSlash, tag("//")),
        value(Tok::Plus, char('+')),
        value(Tok::Minus, char('-')),
        value(Tok::Star, char('*')),
        value(Tok::Percent, char('%')),
        value(Tok::LParen, char('(')),
        value(Tok::RParen, char(')')),
        value(Tok::Comma, char(',')),
    ))(input)
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A bare name: a letter or `_`, then name characters. Converters write
/// dotted symbols (`p2o.DynamicDimension.0`): a dot between name
/// characters belongs to the name.
fn bare_name(input: &str) -> IResult<&str, &str> {
    recognize(tuple((
        satisfy(|c| c.is_ascii_alphabetic() || c == '_'),
        take_while(name_char),
        many0_count(pair(char('.'), take_while1(name_char))),
    )))(input)
}

/// The inside of a quoted name up to (not including) the closing quote:
/// any characters, `\"` and `\\` escaped (a backslash keeps the next
/// character, whatever it is).
fn quoted_body(input: &str) -> IResult<&str, String> {
    fold_many0(
        alt((preceded(char('\\'), anychar), none_of("\\\""))),
        String::new,
        |mut name, c| {
            name.push(c);
            name
        },
    )(input)
}

fn tokenize(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        // whitespace cannot fail to parse: it may be empty
        let after_space: IResult<&str, &str> = multispace0(rest);
        if let Ok((r, _)) = after_space {
            rest = r;
        }
        let start = text.len() - rest.len();
        if rest.is_empty() {
            break;
        }
        let (r, tok) = if let Ok((r, digits)) = digit1::<&str, ()>(rest) {
            let v = digits
                .parse::<u64>()
                .map_err(|_| ExprError::at("integer literal too large", start))?;
            (r, Tok::Num(v))
        } else if let Ok((r, name)) = bare_name(rest) {
            (r, Tok::Ident(name.to_string()))
        } else if let Some(quoted) = rest.strip_prefix('"') {
            let (r, name) =
                quoted_body(quoted).map_err(|_| ExprError::at("unclosed quoted name", start))?;
            let r = r
                .strip_prefix('"')
                .ok_or_else(|| ExprError::at("unclosed quoted name", start))?;
            if name.is_empty() {
                return Err(ExprError::at("empty quoted name", start));
            }
            (r, Tok::Ident(name))
        } else if let Ok((r, tok)) = punctuation(rest) {
            (r, tok)
        } else if rest.starts_with('/') {
            return Err(ExprError::at(
                "unexpected character '/' (division is '//')",
                start,
            ));
        } else {
            let ch = rest.chars().next().unwrap_or('?');
            return Err(ExprError::at(format!("unexpected character '{ch}'"), start));
        };
        out.push(Token {
            tok,
            start,
            end: text.len() - r.len(),
        });
        rest = r;
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
