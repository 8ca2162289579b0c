//! numpy-style indexing for `print NAME[0, :3]`, parsed with `nom`:
//!
//! ```text
//! index := '[' item (',' item)* ','? ']'
//! item  := '...' | INT | INT? ':' INT? (':' INT?)?
//! ```
//!
//! An integer picks one position (negative counts from the end) and drops
//! the axis; `start:stop:step` keeps it, with numpy's clamping and negative
//! steps; `...` stands for as many `:` as the rank needs; missing trailing
//! items are `:`. Errors name the column (1-based, in the text after
//! `print`).

use crate::tensor::Tensor;
use ndarray::SliceInfoElem;
use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::{char, digit1, multispace0};
use nom::combinator::{map, opt, recognize};
use nom::sequence::{pair, preceded};
use nom::IResult;

/// One item of an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Index(i64),
    Range {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    Ellipsis,
}

/// A parsed index: items with the column each starts at (0-based offset
/// into the text given to [`split`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    pub items: Vec<(Item, usize)>,
}

/// A bad index: what is wrong and the 0-based offset where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceError {
    pub at: usize,
    pub msg: String,
}

impl SliceError {
    /// The message with the column and the text marked under it.
    pub fn render(&self, text: &str) -> String {
        let col = text[..self.at.min(text.len())].chars().count();
        format!(
            "{} (column {})\n  {text}\n  {}^",
            self.msg,
            col + 1,
            " ".repeat(col)
        )
    }
}

fn err(at: usize, msg: impl Into<String>) -> SliceError {
    SliceError {
        at,
        msg: msg.into(),
    }
}

fn int(i: &str) -> IResult<&str, &str> {
    recognize(pair(opt(char('-')), digit1))(i)
}

fn ws_int(i: &str) -> IResult<&str, &str> {
    preceded(multispace0, int)(i)
}

/// `INT? ':' INT? (':' INT?)?` or `INT`, as texts.
type RawItem<'a> = (
    Option<&'a str>,
    Option<(Option<&'a str>, Option<Option<&'a str>>)>,
);

fn raw_item(i: &str) -> IResult<&str, RawItem<'_>> {
    pair(
        opt(ws_int),
        opt(preceded(
            preceded(multispace0, char(':')),
            pair(
                opt(ws_int),
                opt(preceded(preceded(multispace0, char(':')), opt(ws_int))),
            ),
        )),
    )(i)
}

enum Parsed<'a> {
    Ellipsis,
    Raw(RawItem<'a>),
}

fn item(i: &str) -> IResult<&str, Parsed<'_>> {
    alt((
        map(preceded(multispace0, tag("...")), |_| Parsed::Ellipsis),
        map(raw_item, Parsed::Raw),
    ))(i)
}

/// Splits `NAME[...]` (NAME plain or double-quoted) into the name text
/// and the offset where the index starts, if there is one.
pub fn split(text: &str) -> Result<(&str, Option<usize>), SliceError> {
    let t = text;
    if let Some(rest) = t.strip_prefix('"') {
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                let end = i + 2;
                let after = &t[end..];
                return if after.trim().is_empty() {
                    Ok((t, None))
                } else if after.trim_start().starts_with('[') {
                    let lead = after.len() - after.trim_start().len();
                    Ok((&t[..end], Some(end + lead)))
                } else {
                    Err(err(end, "expected '[' after the quoted name"))
                };
            }
        }
        return Ok((t, None)); // unterminated: unquote_name reports it
    }
    match t.find('[') {
        Some(0) => Err(err(0, "expected a value name before '['")),
        Some(p) => Ok((t[..p].trim_end(), Some(p))),
        None => Ok((t, None)),
    }
}

/// Parses the index starting at `start` (a `[`) in `text`.
pub fn parse(text: &str, start: usize) -> Result<Index, SliceError> {
    let off = |rest: &str| text.len() - rest.len();
    let Some(mut rest) = text.get(start..).and_then(|r| r.strip_prefix('[')) else {
        return Err(err(start, "expected '['"));
    };
    let mut items = Vec::new();
    loop {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix(']') {
            if items.is_empty() {
                return Err(err(
                    off(trimmed),
                    "empty index: give at least one item ('...' for all)",
                ));
            }
            if !after.trim().is_empty() {
                return Err(err(
                    off(after) + after.len() - after.trim_start().len(),
                    "unexpected text after ']'",
                ));
            }
            return Ok(Index { items });
        }
        let at = off(trimmed);
        let (r, p) = item(rest).map_err(|_| err(at, "expected an index"))?;
        let number = |s: &str| -> Result<i64, SliceError> {
            s.parse::<i64>().map_err(|_| {
                err(
                    s.as_ptr() as usize - text.as_ptr() as usize,
                    format!("{s} is too large for an index"),
                )
            })
        };
        let num = |s: Option<&str>| s.map(number).transpose();
        let it = match p {
            Parsed::Ellipsis => Item::Ellipsis,
            Parsed::Raw((None, None)) => {
                return Err(err(
                    at,
                    "expected an integer, a slice (start:stop:step) or '...'",
                ))
            }
            Parsed::Raw((Some(i), None)) => Item::Index(number(i)?),
            Parsed::Raw((start, Some((stop, step)))) => Item::Range {
                start: num(start)?,
                stop: num(stop)?,
                step: num(step.flatten())?,
            },
        };
        items.push((it, at));
        let r2 = r.trim_start();
        if let Some(after) = r2.strip_prefix(',') {
            rest = after;
        } else if r2.starts_with(']') {
            rest = r2;
        } else if r2.is_empty() {
            return Err(err(off(r2), "missing ']'"));
        } else {
            return Err(err(off(r2), "expected ',' or ']'"));
        }
    }
}

/// numpy's slice of an axis of `n`: the first position, the count, the step.
fn resolve_range(start: Option<i64>, stop: Option<i64>, step: i64, n: usize) -> (i128, i128, i128) {
    let n = n as i128;
    let step = step as i128;
    let norm = |v: i64, lo: i128, hi: i128| -> i128 {
        let v = v as i128;
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    if step > 0 {
        let s = start.map_or(0, |v| norm(v, 0, n));
        let e = stop.map_or(n, |v| norm(v, 0, n));
        let count = if e > s { (e - s + step - 1) / step } else { 0 };
        (s, count, step)
    } else {
        let s = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let e = stop.map_or(-1, |v| norm(v, -1, n - 1));
        let count = if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        (s, count, step)
    }
}

/// Applies an index to a tensor.
pub fn apply(t: &Tensor, idx: &Index) -> Result<Tensor, SliceError> {
    let shape = t.shape();
    let rank = shape.len();
    let ellipses: Vec<usize> = idx
        .items
        .iter()
        .filter(|(i, _)| *i == Item::Ellipsis)
        .map(|(_, at)| *at)
        .collect();
    if let Some(&at) = ellipses.get(1) {
        return Err(err(at, "only one '...' is allowed"));
    }
    let explicit = idx.items.len() - ellipses.len();
    if explicit > rank {
        let at = idx
            .items
            .iter()
            .filter(|(i, _)| *i != Item::Ellipsis)
            .nth(rank)
            .map_or(0, |(_, at)| *at);
        return Err(err(
            at,
            format!(
                "too many indices: the value has rank {rank} (shape {})",
                crate::repl::render::tuple(shape)
            ),
        ));
    }
    let full = Item::Range {
        start: None,
        stop: None,
        step: None,
    };
    let mut expanded: Vec<(Item, usize)> = Vec::with_capacity(rank);
    for (it, at) in &idx.items {
        if *it == Item::Ellipsis {
            for _ in 0..rank - explicit {
                expanded.push((full.clone(), *at));
            }
        } else {
            expanded.push((it.clone(), *at));
        }
    }
    while expanded.len() < rank {
        expanded.push((full.clone(), 0));
    }
    let mut elems = Vec::with_capacity(rank);
    for (axis, ((it, at), &n)) in expanded.iter().zip(shape).enumerate() {
        match it {
            Item::Index(i) => {
                let k = if *i < 0 {
                    *i as i128 + n as i128
                } else {
                    *i as i128
                };
                if k < 0 || k >= n as i128 {
                    return Err(err(
                        *at,
                        format!("index {i} is out of range for axis {axis} of size {n}"),
                    ));
                }
                elems.push(SliceInfoElem::Index(k as isize));
            }
            Item::Range { start, stop, step } => {
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(err(*at, "the slice step cannot be 0"));
                }
                let (first, count, step) = resolve_range(*start, *stop, step, n);
                let e = if count == 0 {
                    SliceInfoElem::Slice {
                        start: 0,
                        end: Some(0),
                        step: 1,
                    }
                } else if step > 0 {
                    SliceInfoElem::Slice {
                        start: first as isize,
                        end: Some((first + (count - 1) * step + 1) as isize),
                        step: step as isize,
                    }
                } else {
                    // ndarray walks a negative step from the end of the range
                    let last = first + (count - 1) * step;
                    SliceInfoElem::Slice {
                        start: last as isize,
                        end: Some((first + 1) as isize),
                        step: step as isize,
                    }
                };
                elems.push(e);
            }
            Item::Ellipsis => {}
        }
    }
    Ok(crate::map_array!(t, a => a.slice(elems.as_slice()).to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec(shape, (0..n as i64).collect::<Vec<_>>()).unwrap()
    }

    fn sl(text: &str, x: &Tensor) -> Result<(Vec<usize>, Vec<i64>), String> {
        let (_, at) = split(text).map_err(|e| e.render(text))?;
        let idx = parse(text, at.unwrap()).map_err(|e| e.render(text))?;
        let r = apply(x, &idx).map_err(|e| e.render(text))?;
        Ok((r.shape().to_vec(), r.to_i64_vec().unwrap()))
    }

    #[test]
    fn numpy_semantics() {
        let x = t(&[3, 4]);
        assert_eq!(sl("x[0]", &x).unwrap(), (vec![4], vec![0, 1, 2, 3]));
        assert_eq!(sl("x[0, :3]", &x).unwrap(), (vec![3], vec![0, 1, 2]));
        assert_eq!(sl("x[-1, ::-2]", &x).unwrap(), (vec![2], vec![11, 9]));
        assert_eq!(sl("x[..., 1]", &x).unwrap(), (vec![3], vec![1, 5, 9]));
        assert_eq!(
            sl("x[1:, 3:0:-1]", &x).unwrap(),
            (vec![2, 3], vec![7, 6, 5, 11, 10, 9])
        );
        assert_eq!(sl("x[5:, :]", &x).unwrap(), (vec![0, 4], vec![]));
        assert_eq!(sl("x[-10:2, -2]", &x).unwrap(), (vec![2], vec![2, 6]));
        assert_eq!(sl("x[:,]", &x).unwrap().0, vec![3, 4]);
        let y = t(&[2, 3, 4]);
        assert_eq!(
            sl("y[..., 0, 1:3]", &y).unwrap(),
            (vec![2, 2], vec![1, 2, 13, 14])
        );
        assert_eq!(sl("\"a.b\"[1, 2, 3]", &y).unwrap(), (vec![], vec![23]));
    }

    #[test]
    fn errors_name_the_column() {
        let x = t(&[3, 4]);
        let e = sl("x[0, 9]", &x).unwrap_err();
        assert!(
            e.contains("index 9 is out of range for axis 1 of size 4 (column 6)"),
            "{e}"
        );
        let e = sl("x[0, 1, 2]", &x).unwrap_err();
        assert!(
            e.contains("too many indices") && e.contains("column 9"),
            "{e}"
        );
        let e = sl("x[::0]", &x).unwrap_err();
        assert!(e.contains("step cannot be 0 (column 3)"), "{e}");
        let e = sl("x[a]", &x).unwrap_err();
        assert!(e.contains("column 3"), "{e}");
        let e = sl("x[0", &x).unwrap_err();
        assert!(e.contains("missing ']'"), "{e}");
        let e = sl("x[99999999999999999999]", &x).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let e = sl("x[..., ...]", &x).unwrap_err();
        assert!(e.contains("only one"), "{e}");
        let e = sl("x[]", &x).unwrap_err();
        assert!(e.contains("empty index"), "{e}");
    }
}
