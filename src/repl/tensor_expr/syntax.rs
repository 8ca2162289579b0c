//! The syntax of tensor expressions (SPEC §4), parsed with `nom` into a
//! [`Node`] tree:
//!
//! ```text
//! expr    := primary ('.' NAME ('(' args ')')?)*
//! primary := '(' expr ')' | literal | NAME '(' args ')'
//! literal := NUMBER | STRING | true | false | nan | inf | -inf | '[' literal,* ']'
//!          | '{' (literal ':' literal),* '}'   -- a map (int or string keys)
//! args    := arg (',' arg)*       -- each kept as text, and as a tree when it is an expr
//! ```
//!
//! Arguments are kept as text as well as trees because a constructor reads
//! them in its own way: `rand(N, 2*M)` takes dimension expressions, which
//! are not tensor expressions. Nesting (lists, parentheses, calls) is bounded
//! by [`MAX_DEPTH`], so no input can overflow the stack; integers are kept
//! exact (`[9007199254740993]` is not rounded through a float).

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, digit0, digit1, multispace0, one_of};
use nom::combinator::{opt, recognize};
use nom::error::{ErrorKind, ParseError};
use nom::sequence::{pair, tuple};
use nom::IResult;
use std::borrow::Cow;

/// How deeply lists, parentheses and calls may nest.
pub const MAX_DEPTH: usize = 256;

/// A parsed tensor expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<Node>),
    /// `{key: value, …}`: a map value (ai.onnx.ml inputs such as
    /// DictVectorizer's).
    Dict(Vec<(Node, Node)>),
    Call {
        name: String,
        args: Vec<Arg>,
    },
    Method {
        recv: Box<Node>,
        name: String,
        /// `None` without parentheses (`.T`).
        args: Option<Vec<Arg>>,
    },
}

/// One argument of a call: its text, and its tree when the text is a
/// tensor expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub text: String,
    pub node: Option<Node>,
}

/// A parse error: where (the unparsed rest of the input) and what.
#[derive(Debug)]
pub struct PErr<'a> {
    at: &'a str,
    msg: Cow<'static, str>,
}

impl<'a> ParseError<&'a str> for PErr<'a> {
    fn from_error_kind(input: &'a str, _: ErrorKind) -> Self {
        PErr {
            at: input,
            msg: Cow::Borrowed(""),
        }
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }
}

type Res<'a, T> = IResult<&'a str, T, PErr<'a>>;

fn fail<'a, T>(at: &'a str, msg: impl Into<Cow<'static, str>>) -> Res<'a, T> {
    Err(nom::Err::Failure(PErr {
        at,
        msg: msg.into(),
    }))
}

/// A column (1-based, in characters) for an error at `at` within `full`.
fn column(full: &str, at: &str) -> usize {
    let off = full.len().saturating_sub(at.len());
    full[..off].chars().count() + 1
}

/// Turns a nom error into `column N: message`.
fn report(full: &str, e: nom::Err<PErr>) -> String {
    let (at, msg) = match e {
        nom::Err::Error(p) | nom::Err::Failure(p) => (p.at, p.msg),
        nom::Err::Incomplete(_) => ("", Cow::Borrowed("")),
    };
    let msg = if msg.is_empty() {
        match at.chars().next() {
            Some(c) => Cow::Owned(format!("unexpected '{c}'")),
            None => Cow::Borrowed("unexpected end of the expression"),
        }
    } else {
        msg
    };
    format!("column {}: {msg}", column(full, at))
}

fn ident(i: &str) -> Res<'_, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))(i)
}

/// A decimal number: `12`, `-3`, `2.5`, `.5`, `1e-3`, `2.`.
fn number(i: &str) -> Res<'_, Node> {
    let (rest, text) = recognize(tuple((
        opt(one_of("+-")),
        alt((
            recognize(tuple((digit1, opt(pair(char('.'), digit0))))),
            recognize(pair(char('.'), digit1)),
        )),
        opt(tuple((one_of("eE"), opt(one_of("+-")), digit1))),
    )))(i)?;
    if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return fail(
            rest,
            format!("unexpected '{}' after the number", &rest[..1]),
        );
    }
    let is_int = !text.contains(['.', 'e', 'E']);
    if is_int {
        if let Ok(v) = text.parse::<i64>() {
            return Ok((rest, Node::Int(v)));
        }
    }
    match text.parse::<f64>() {
        Ok(v) => Ok((rest, Node::Float(v))),
        Err(_) => fail(i, format!("cannot read the number '{text}'")),
    }
}

/// A quoted string (`"…"` or `'…'`) with `\\`, `\"`, `\'`, `\n`, `\t`,
/// `\r`, `\0` escapes.
fn string(i: &str) -> Res<'_, Node> {
    let (body, q) = one_of("\"'")(i)?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, e)) => out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    other => other,
                }),
                None => break,
            },
            c if c == q => return Ok((&body[k + 1..], Node::Str(out))),
            c => out.push(c),
        }
    }
    fail(i, "unterminated string")
}

/// A name that stands for a literal value.
fn named_literal(name: &str) -> Option<Node> {
    Some(match name {
        "true" | "True" => Node::Bool(true),
        "false" | "False" => Node::Bool(false),
        "nan" | "NaN" => Node::Float(f64::NAN),
        "inf" => Node::Float(f64::INFINITY),
        _ => return None,
    })
}

fn guard(i: &str, depth: usize) -> Res<'_, ()> {
    if depth > MAX_DEPTH {
        return fail(i, format!("nested deeper than {MAX_DEPTH} levels"));
    }
    Ok((i, ()))
}

/// A literal: number, string, named literal or list of literals.
fn literal(depth: usize, i: &str) -> Res<'_, Node> {
    guard(i, depth)?;
    let (i, _) = multispace0(i)?;
    if i.starts_with('[') {
        return list(depth + 1, i);
    }
    if i.starts_with('{') {
        return dict(depth + 1, i);
    }
    if i.starts_with(['"', '\'']) {
        return string(i);
    }
    if let Some(r) = i.strip_prefix("-inf") {
        if !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            return Ok((r, Node::Float(f64::NEG_INFINITY)));
        }
    }
    if let Ok((r, name)) = ident(i) {
        return match named_literal(name) {
            Some(n) => Ok((r, n)),
            None => fail(i, format!("'{name}' is not a value")),
        };
    }
    match number(i) {
        Ok(x) => Ok(x),
        Err(nom::Err::Error(_)) => fail(i, "expected a value"),
        Err(e) => Err(e),
    }
}

fn list(depth: usize, i: &str) -> Res<'_, Node> {
    let (mut i, _) = char('[')(i)?;
    let mut items = Vec::new();
    loop {
        let (r, _) = multispace0(i)?;
        if let Some(r) = r.strip_prefix(']') {
            return Ok((r, Node::List(items)));
        }
        if !items.is_empty() {
            match r.strip_prefix(',') {
                Some(r2) => {
                    let (r2, _) = multispace0(r2)?;
                    // a trailing comma
                    if let Some(r3) = r2.strip_prefix(']') {
                        return Ok((r3, Node::List(items)));
                    }
                    i = r2;
                }
                None if r.is_empty() => return fail(r, "expected ']'"),
                None => return fail(r, "expected ',' or ']'"),
            }
        } else {
            i = r;
        }
        if i.is_empty() {
            return fail(i, "expected ']'");
        }
        let (r, item) = literal(depth, i)?;
        items.push(item);
        i = r;
    }
}

/// `{key: value, …}`; keys and values are literals (checked when the map
/// is built), a trailing comma is allowed.
fn dict(depth: usize, i: &str) -> Res<'_, Node> {
    guard(i, depth)?;
    let (mut i, _) = char('{')(i)?;
    let mut entries = Vec::new();
    loop {
        let (r, _) = multispace0(i)?;
        if let Some(r) = r.strip_prefix('}') {
            return Ok((r, Node::Dict(entries)));
        }
        let r = if entries.is_empty() {
            r
        } else {
            match r.strip_prefix(',') {
                Some(r2) => {
                    let (r2, _) = multispace0(r2)?;
                    if let Some(r3) = r2.strip_prefix('}') {
                        return Ok((r3, Node::Dict(entries)));
                    }
                    r2
                }
                None => return fail(r, "expected ',' or '}'"),
            }
        };
        if r.is_empty() {
            return fail(r, "expected '}'");
        }
        let (r, key) = literal(depth, r)?;
        let (r, _) = multispace0(r)?;
        let Some(r) = r.strip_prefix(':') else {
            return fail(r, "expected ':' after a map key");
        };
        let (r, value) = literal(depth, r)?;
        entries.push((key, value));
        i = r;
    }
}

/// The end of one argument: the first top-level `,` or `)` (outside
/// brackets and strings), found without recursion.
fn arg_span(i: &str) -> Res<'_, &str> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (k, c) in i.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ')' | ',' if depth == 0 => return Ok((&i[k..], &i[..k])),
            ']' | '}' => return fail(&i[k..], format!("unexpected '{c}'")),
            _ => {}
        }
    }
    fail(&i[i.len()..], "expected ')'")
}

/// `(a, b, …)` after a function or method name.
fn call_args(depth: usize, i: &str) -> Res<'_, Vec<Arg>> {
    let (mut i, _) = char('(')(i)?;
    let mut args = Vec::new();
    let (r, _) = multispace0(i)?;
    if let Some(r) = r.strip_prefix(')') {
        return Ok((r, args));
    }
    loop {
        let (r, text) = arg_span(i)?;
        let text = text.trim();
        if text.is_empty() {
            return fail(r, "expected an argument");
        }
        let node = match parse_at(text, depth + 1) {
            Ok(n) => Some(n),
            // too deep is final, whatever the argument is
            Err(e) if e.contains("nested deeper") => return fail(i, e_text(e)),
            Err(_) => None,
        };
        args.push(Arg {
            text: text.to_string(),
            node,
        });
        match r.chars().next() {
            Some(',') => i = &r[1..],
            _ => return Ok((&r[1..], args)),
        }
    }
}

fn e_text(e: String) -> String {
    match e.split_once(": ") {
        Some((_, m)) => m.to_string(),
        None => e,
    }
}

fn primary(depth: usize, i: &str) -> Res<'_, Node> {
    guard(i, depth)?;
    let (i, _) = multispace0(i)?;
    if let Some(r) = i.strip_prefix('(') {
        let (r, e) = expr(depth + 1, r)?;
        let (r, _) = multispace0(r)?;
        return match r.strip_prefix(')') {
            Some(r) => Ok((r, e)),
            None => fail(r, "expected ')'"),
        };
    }
    if let Ok((r, name)) = ident(i) {
        if r.starts_with('(') {
            let (r, args) = call_args(depth, r)?;
            return Ok((
                r,
                Node::Call {
                    name: name.to_string(),
                    args,
                },
            ));
        }
        if let Some(n) = named_literal(name) {
            return Ok((r, n));
        }
        return fail(
            i,
            format!(
                "unknown name '{name}' (a tensor expression is a number, a list, \
                 a string or a function call)"
            ),
        );
    }
    if i.is_empty() {
        return fail(i, "expected a tensor expression");
    }
    literal(depth, i)
}

fn expr(depth: usize, i: &str) -> Res<'_, Node> {
    let (mut i, mut node) = primary(depth, i)?;
    while let Some(r) = i.strip_prefix('.') {
        let (r, name) = match ident(r) {
            Ok(x) => x,
            Err(_) => return fail(r, "expected a method name after '.'"),
        };
        let (r, args) = if r.starts_with('(') {
            let (r, a) = call_args(depth, r)?;
            (r, Some(a))
        } else {
            (r, None)
        };
        node = Node::Method {
            recv: Box::new(node),
            name: name.to_string(),
            args,
        };
        i = r;
    }
    Ok((i, node))
}

fn parse_at(text: &str, depth: usize) -> Result<Node, String> {
    let (rest, node) = expr(depth, text).map_err(|e| report(text, e))?;
    let (rest, _) = multispace0::<_, PErr>(rest).map_err(|e| report(text, e))?;
    if !rest.is_empty() {
        return Err(report(
            text,
            nom::Err::Failure(PErr {
                at: rest,
                msg: Cow::Owned(format!(
                    "unexpected '{}' after the expression",
                    rest.chars().next().unwrap_or(' ')
                )),
            }),
        ));
    }
    Ok(node)
}

/// Parses a whole tensor expression.
pub fn parse(text: &str) -> Result<Node, String> {
    parse_at(text, 0)
}

/// Parses `NAME = EXPR …` assignments separated by white space (the
/// arguments of `run`): a name is a double-quoted string or a run of
/// characters other than white space and `=`; spaces around `=` are fine.
pub fn parse_assignments(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut i = text;
    loop {
        let (r, _) = multispace0::<_, PErr>(i).map_err(|e| report(text, e))?;
        if r.is_empty() {
            return Ok(out);
        }
        let (r, name) = if r.starts_with('"') {
            match string(r) {
                Ok((r, Node::Str(s))) => (r, s),
                _ => {
                    return Err(report(
                        text,
                        nom::Err::Failure(PErr {
                            at: r,
                            msg: "unterminated quoted name".into(),
                        }),
                    ))
                }
            }
        } else {
            let (r2, n) = take_while::<_, _, PErr>(|c: char| !c.is_whitespace() && c != '=')(r)
                .map_err(|e| report(text, e))?;
            (r2, n.to_string())
        };
        let (r, _) = multispace0::<_, PErr>(r).map_err(|e| report(text, e))?;
        let r = match tag::<_, _, PErr>("=")(r) {
            Ok((r, _)) => r,
            Err(_) => {
                return Err(format!(
                    "expected NAME=TENSOR at column {}",
                    column(text, r).min(text.chars().count() + 1)
                ))
            }
        };
        let (r, _) = multispace0::<_, PErr>(r).map_err(|e| report(text, e))?;
        let (rest, _) = expr(0, r).map_err(|e| report(text, e))?;
        let value = &r[..r.len() - rest.len()];
        if name.is_empty() {
            return Err(format!(
                "expected a name before '=' at column {}",
                column(text, r)
            ));
        }
        out.push((name, value.trim().to_string()));
        i = rest;
        if !i.is_empty() && !i.starts_with(char::is_whitespace) {
            return Err(report(
                text,
                nom::Err::Failure(PErr {
                    at: i,
                    msg: Cow::Owned(format!(
                        "unexpected '{}' after the expression",
                        i.chars().next().unwrap_or(' ')
                    )),
                }),
            ));
        }
    }
}

/// The items of a bracketed list given as text (`[N, 2*M]` or `(N, 2)`),
/// split at top-level commas; `None` when `text` is not bracketed.
pub fn list_items(text: &str) -> Option<Result<Vec<String>, String>> {
    let t = text.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .or_else(|| t.strip_prefix('(').and_then(|r| r.strip_suffix(')')))?;
    if inner.trim().is_empty() {
        return Some(Ok(vec![]));
    }
    let wrapped = format!("({inner})");
    Some(
        call_args(0, &wrapped)
            .map(|(_, args)| args.into_iter().map(|a| a.text).collect())
            .map_err(|e| report(&wrapped, e)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees() {
        assert_eq!(parse(" 3 "), Ok(Node::Int(3)));
        assert_eq!(parse("9007199254740993"), Ok(Node::Int(9007199254740993)));
        assert_eq!(parse("-2.5e1"), Ok(Node::Float(-25.0)));
        assert_eq!(
            parse("[ 1, [2] ,]"),
            Ok(Node::List(vec![
                Node::Int(1),
                Node::List(vec![Node::Int(2)])
            ]))
        );
        assert_eq!(parse(r#""a\"b\\""#), Ok(Node::Str("a\"b\\".into())));
        let Ok(Node::Method { recv, name, args }) = parse("arange(8).reshape(2, N*2)") else {
            panic!()
        };
        assert_eq!(name, "reshape");
        let args = args.unwrap();
        assert_eq!(args[1].text, "N*2");
        assert_eq!(args[1].node, None);
        assert!(matches!(*recv, Node::Call { .. }));
        assert!(matches!(
            parse("zeros(2).T"),
            Ok(Node::Method { args: None, .. })
        ));
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(parse("[1, 2").unwrap_err(), "column 6: expected ']'");
        assert_eq!(parse("[1 2]").unwrap_err(), "column 4: expected ',' or ']'");
        assert!(parse("foo").unwrap_err().contains("unknown name 'foo'"));
        assert!(parse("rand(2) x").unwrap_err().contains("column 9"));
        assert!(parse("\"abc").unwrap_err().contains("unterminated"));
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        for text in [
            "[".repeat(10_000) + &"]".repeat(10_000),
            "(".repeat(20_000) + "1" + &")".repeat(20_000),
            "zeros(".repeat(5_000) + "1" + &")".repeat(5_000),
        ] {
            let e = parse(&text).unwrap_err();
            assert!(e.contains("nested deeper"), "{e}");
        }
        let ok = "[".repeat(100) + "1" + &"]".repeat(100);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn assignments() {
        assert_eq!(
            parse_assignments(r#"x = rand(1, 4)  "a b"=[1] y=arange(8).reshape(2,4)"#).unwrap(),
            vec![
                ("x".to_string(), "rand(1, 4)".to_string()),
                ("a b".to_string(), "[1]".to_string()),
                ("y".to_string(), "arange(8).reshape(2,4)".to_string()),
            ]
        );
        assert_eq!(
            parse_assignments("p2o.x.0=[1]").unwrap(),
            vec![("p2o.x.0".to_string(), "[1]".to_string())]
        );
        assert!(parse_assignments("x").unwrap_err().contains("NAME=TENSOR"));
        assert_eq!(
            list_items("[N, 2*M]").unwrap().unwrap(),
            vec!["N".to_string(), "2*M".to_string()]
        );
    }
}
