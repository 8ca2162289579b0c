//! Sequence and optional kernels: SequenceEmpty, SequenceConstruct,
//! SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
//! SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
//! OptionalHasElement, OptionalGetElement.

use super::control::{graph_output_types, stack_tensors, take_index, take_range};
use super::manip::concat_tensors;
use super::norm_axis;
use crate::bail;
use crate::runtime::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};

fn seq_in<'v>(
    ins: &[Option<&'v Value>],
    i: usize,
) -> Result<(DataType, &'v Vec<Tensor>), KernelError> {
    match ins.get(i).copied().flatten() {
        Some(Value::Sequence { elem_type, items }) => Ok((*elem_type, items)),
        Some(v) => bail!("input {i} must be a sequence, got {}", v.describe()),
        None => bail!("input {i} is missing"),
    }
}

/// A scalar position as an index into `0..=len` (insert) or `0..len`.
fn position(t: &Tensor, len: usize, inclusive_end: bool) -> Result<usize, KernelError> {
    let v = t.to_i64_vec()?;
    if v.len() != 1 {
        bail!("position must be a scalar, got shape {:?}", t.shape());
    }
    let n = len as i64;
    let p = v[0];
    let hi = if inclusive_end { n } else { n - 1 };
    if p < -n || p > hi {
        bail!("position {p} is out of range for a sequence of {len} tensors");
    }
    Ok(if p < 0 { p + n } else { p } as usize)
}

fn seq(elem_type: DataType, items: Vec<Tensor>) -> Value {
    Value::Sequence { elem_type, items }
}

fn check_type(want: DataType, t: &Tensor) -> Result<(), KernelError> {
    if want != DataType::Undefined && t.dtype() != want {
        bail!("a tensor of {} cannot join a sequence of {want}", t.dtype());
    }
    Ok(())
}

pub fn sequence_empty(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let code = info.attrs.int_or("dtype", DataType::Float.code() as i64);
    let dt = DataType::from_code(code as i32)
        .ok_or_else(|| KernelError::new(format!("dtype {code} is not an element type")))?;
    Ok(Box::new(move |_, _| Ok(vec![seq(dt, vec![])])))
}

pub fn sequence_construct(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let mut items = Vec::with_capacity(ins.len());
        for i in 0..ins.len() {
            items.push(tensor_in(ins, i)?.clone());
        }
        let Some(first) = items.first() else {
            bail!("SequenceConstruct needs at least one input");
        };
        let dt = first.dtype();
        for t in &items {
            check_type(dt, t)?;
        }
        Ok(vec![seq(dt, items)])
    }))
}

pub fn sequence_insert(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (dt, items) = seq_in(ins, 0)?;
        let t = tensor_in(ins, 1)?;
        let dt = if dt == DataType::Undefined {
            t.dtype()
        } else {
            dt
        };
        check_type(dt, t)?;
        let pos = match opt_tensor_in(ins, 2)? {
            Some(p) => position(p, items.len(), true)?,
            None => items.len(),
        };
        let mut items = items.clone();
        items.insert(pos, t.clone());
        Ok(vec![seq(dt, items)])
    }))
}

pub fn sequence_at(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        let pos = position(tensor_in(ins, 1)?, items.len(), false)?;
        Ok(vec![Value::Tensor(items[pos].clone())])
    }))
}

pub fn sequence_erase(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (dt, items) = seq_in(ins, 0)?;
        if items.is_empty() {
            bail!("cannot erase from an empty sequence");
        }
        let pos = match opt_tensor_in(ins, 1)? {
            Some(p) => position(p, items.len(), false)?,
            None => items.len() - 1,
        };
        let mut items = items.clone();
        items.remove(pos);
        Ok(vec![seq(dt, items)])
    }))
}

pub fn sequence_length(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        Ok(vec![Value::Tensor(Tensor::scalar(items.len() as i64))])
    }))
}

pub fn split_to_sequence(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info.attrs.int_or("axis", 0);
    let keepdims = info.attrs.int_or("keepdims", 1) != 0;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let ax = norm_axis(axis, x.rank())?;
        let n = x.shape()[ax];
        let mut items = vec![];
        match opt_tensor_in(ins, 1)? {
            None => {
                for i in 0..n {
                    let t = if keepdims {
                        take_range(x, ax, i, i + 1)?
                    } else {
                        take_index(x, ax, i)?
                    };
                    items.push(t);
                }
            }
            Some(s) => {
                let v = s.to_i64_vec()?;
                let sizes: Vec<usize> = if s.rank() == 0 {
                    let c = v[0];
                    if c <= 0 {
                        bail!("split size {c} must be positive");
                    }
                    let c = c as usize;
                    let mut out = vec![c; n / c];
                    if n % c != 0 {
                        out.push(n % c);
                    }
                    out
                } else {
                    if v.iter().any(|&d| d < 0) {
                        bail!("split {v:?} has a negative size");
                    }
                    let total: i64 = v.iter().fold(0i64, |a, &b| a.saturating_add(b));
                    if total != n as i64 {
                        bail!("split {v:?} sums to {total}, axis {ax} has {n}");
                    }
                    v.iter().map(|&d| d as usize).collect()
                };
                let mut start = 0;
                for sz in sizes {
                    items.push(take_range(x, ax, start, start + sz)?);
                    start += sz;
                }
            }
        }
        Ok(vec![seq(x.dtype(), items)])
    }))
}

pub fn concat_from_sequence(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axis = info
        .attrs
        .int("axis")
        .ok_or_else(|| KernelError::new("ConcatFromSequence needs the 'axis' attribute"))?;
    let new_axis = info.attrs.int_or("new_axis", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let (_, items) = seq_in(ins, 0)?;
        let Some(first) = items.first() else {
            bail!("ConcatFromSequence of an empty sequence");
        };
        if new_axis {
            let ax = norm_axis(axis, first.rank() + 1)?;
            Ok(vec![Value::Tensor(stack_tensors(items, ax)?)])
        } else {
            let refs: Vec<&Tensor> = items.iter().collect();
            Ok(vec![Value::Tensor(concat_tensors(&refs, axis, first)?)])
        }
    }))
}

pub fn sequence_map(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let body = info.subgraph("body")?;
    let g = info
        .attrs
        .graph("body")
        .ok_or_else(|| KernelError::new("SequenceMap needs the 'body' attribute"))?;
    let out_types = graph_output_types(g);
    let n_out = info.node.output.len();
    Ok(Box::new(move |cx, ins| {
        let (_, first) = seq_in(ins, 0)?;
        let n = first.len();
        for (i, v) in ins.iter().enumerate().skip(1) {
            if let Some(Value::Sequence { items, .. }) = v {
                if items.len() != n {
                    bail!(
                        "sequence input {i} has {} tensors, input 0 has {n}",
                        items.len()
                    );
                }
            }
        }
        let mut outs: Vec<Vec<Tensor>> = vec![vec![]; n_out];
        for k in 0..n {
            let mut args = Vec::with_capacity(ins.len());
            for (i, v) in ins.iter().enumerate() {
                match v {
                    Some(Value::Sequence { items, .. }) => {
                        args.push(Value::Tensor(items[k].clone()))
                    }
                    Some(v) => args.push((*v).clone()),
                    None => bail!("input {i} is missing"),
                }
            }
            let res = cx.run_subgraph(&body, args)?;
            if res.len() < n_out {
                bail!("the SequenceMap body produced {} outputs", res.len());
            }
            for (o, v) in outs.iter_mut().zip(res) {
                match v {
                    Value::Tensor(t) => o.push(t),
                    other => bail!("the body output must be a tensor, got {}", other.describe()),
                }
            }
        }
        Ok(outs
            .into_iter()
            .enumerate()
            .map(|(j, items)| {
                let dt = items
                    .first()
                    .map(|t| t.dtype())
                    .or_else(|| out_types.get(j).and_then(|t| t.elem()))
                    .unwrap_or(DataType::Undefined);
                seq(dt, items)
            })
            .collect())
    }))
}

pub fn optional(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        Ok(vec![Value::Optional(
            ins.first().copied().flatten().map(|v| Box::new(v.clone())),
        )])
    }))
}

pub fn optional_has_element(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let has = match ins.first().copied().flatten() {
            None | Some(Value::Optional(None)) => false,
            Some(_) => true,
        };
        Ok(vec![Value::Tensor(Tensor::scalar(has))])
    }))
}

pub fn optional_get_element(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| match ins.first().copied().flatten() {
        Some(Value::Optional(Some(v))) => Ok(vec![(**v).clone()]),
        Some(Value::Optional(None)) => bail!("the optional input is empty"),
        Some(v) => Ok(vec![v.clone()]),
        None => bail!("input 0 is missing"),
    }))
}

/// StringNormalizer (a string op kept here with the other non-numeric
/// kernels): stopword removal then case change, on `[C]` or `[1, C]`.
pub fn string_normalizer(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let action = info.attrs.string_or("case_change_action", "NONE");
    let lower = match action.as_str() {
        "LOWER" => Some(true),
        "UPPER" => Some(false),
        "NONE" => None,
        other => bail!("unknown case_change_action '{other}'"),
    };
    let sensitive = info.attrs.int_or("is_case_sensitive", 0) != 0;
    let stop: Vec<String> = info
        .attrs
        .strings("stopwords")
        .unwrap_or_default()
        .into_iter()
        .map(|w| if sensitive { w } else { w.to_lowercase() })
        .collect();
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let Some(vals) = x.string_values() else {
            bail!("X must be a string tensor, got {}", x.dtype());
        };
        let two_d = match x.shape() {
            [_] => false,
            [1, _] => true,
            other => bail!("X must be [C] or [1, C], got {other:?}"),
        };
        let mut out: Vec<String> = vals
            .into_iter()
            .filter(|v| {
                let key = if sensitive {
                    v.clone()
                } else {
                    v.to_lowercase()
                };
                !stop.contains(&key)
            })
            .map(|v| match lower {
                Some(true) => v.to_lowercase(),
                Some(false) => v.to_uppercase(),
                None => v,
            })
            .collect();
        if out.is_empty() {
            out.push(String::new());
        }
        let shape = if two_d {
            vec![1, out.len()]
        } else {
            vec![out.len()]
        };
        Ok(vec![Value::Tensor(Tensor::from_vec(&shape, out)?)])
    }))
}

// ---------------------------------------------------------------------------
// RegexFullMatch: a small backtracking engine for the common RE2 subset
// (literals, ., classes, \d \w \s \b and negations, groups, alternation,
// greedy/lazy quantifiers, anchors). Unsupported syntax is an error.

#[derive(Clone, Debug)]
enum ClassItem {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
}

#[derive(Clone, Debug)]
enum Re {
    Char(char),
    Any,
    Class(Vec<ClassItem>, bool),
    Start,
    End,
    WordBoundary(bool),
    Concat(Vec<Re>),
    Alt(Vec<Re>),
    Repeat(Box<Re>, usize, Option<usize>),
}

struct ReParser<'a> {
    s: &'a [char],
    i: usize,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl ReParser<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn alt(&mut self, depth: usize) -> Result<Re, KernelError> {
        if depth > 200 {
            bail!("regex nests too deeply");
        }
        let mut alts = vec![self.concat(depth)?];
        while self.peek() == Some('|') {
            self.i += 1;
            alts.push(self.concat(depth)?);
        }
        Ok(if alts.len() == 1 {
            alts.remove(0)
        } else {
            Re::Alt(alts)
        })
    }

    fn concat(&mut self, depth: usize) -> Result<Re, KernelError> {
        let mut items = vec![];
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            items.push(self.quantified(atom)?);
        }
        Ok(Re::Concat(items))
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let t: String = self.s[start..self.i].iter().collect();
        t.parse().ok()
    }

    fn quantified(&mut self, atom: Re) -> Result<Re, KernelError> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let save = self.i;
                self.i += 1;
                let Some(lo) = self.number() else {
                    // a literal '{'
                    self.i = save;
                    return Ok(atom);
                };
                let hi = if self.peek() == Some(',') {
                    self.i += 1;
                    self.number()
                } else {
                    Some(lo)
                };
                if self.peek() != Some('}') {
                    bail!("bad repetition in regex");
                }
                if hi.is_some_and(|h| h < lo) || lo > 1000 || hi.is_some_and(|h| h > 1000) {
                    bail!("bad repetition bounds in regex");
                }
                (lo, hi)
            }
            _ => return Ok(atom),
        };
        self.i += 1;
        if self.peek() == Some('?') {
            self.i += 1; // lazy: same answer for a full match
        }
        if matches!(self.peek(), Some('*' | '+')) {
            bail!("nested quantifiers in regex");
        }
        Ok(Re::Repeat(Box::new(atom), min, max))
    }

    fn escape(&mut self) -> Result<Result<ClassItem, char>, KernelError> {
        let Some(c) = self.peek() else {
            bail!("regex ends with a backslash");
        };
        self.i += 1;
        Ok(match c {
            'd' => Ok(ClassItem::Digit(true)),
            'D' => Ok(ClassItem::Digit(false)),
            'w' => Ok(ClassItem::Word(true)),
            'W' => Ok(ClassItem::Word(false)),
            's' => Ok(ClassItem::Space(true)),
            'S' => Ok(ClassItem::Space(false)),
            'n' => Err('\n'),
            't' => Err('\t'),
            'r' => Err('\r'),
            'f' => Err('\x0c'),
            'v' => Err('\x0b'),
            c if c.is_ascii_alphanumeric() => bail!("unsupported regex escape \\{c}"),
            c => Err(c),
        })
    }

    fn atom(&mut self, depth: usize) -> Result<Re, KernelError> {
        let Some(c) = self.peek() else {
            bail!("unexpected end of regex");
        };
        self.i += 1;
        Ok(match c {
            '.' => Re::Any,
            '^' => Re::Start,
            '$' => Re::End,
            '(' => {
                if self.peek() == Some('?') {
                    if self.s.get(self.i + 1) == Some(&':') {
                        self.i += 2;
                    } else {
                        bail!("unsupported group syntax in regex");
                    }
                }
                let inner = self.alt(depth + 1)?;
                if self.peek() != Some(')') {
                    bail!("missing ')' in regex");
                }
                self.i += 1;
                inner
            }
            '[' => self.class()?,
            '\\' => match self.peek() {
                Some('b') => {
                    self.i += 1;
                    Re::WordBoundary(true)
                }
                Some('B') => {
                    self.i += 1;
                    Re::WordBoundary(false)
                }
                _ => match self.escape()? {
                    Ok(item) => Re::Class(vec![item], false),
                    Err(ch) => Re::Char(ch),
                },
            },
            '*' | '+' | '?' => bail!("quantifier without operand in regex"),
            c => Re::Char(c),
        })
    }

    fn class(&mut self) -> Result<Re, KernelError> {
        let neg = self.peek() == Some('^');
        if neg {
            self.i += 1;
        }
        let mut items = vec![];
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                bail!("missing ']' in regex");
            };
            if c == ']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            self.i += 1;
            let lo = if c == '\\' {
                match self.escape()? {
                    Ok(item) => {
                        items.push(item);
                        continue;
                    }
                    Err(ch) => ch,
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.s.get(self.i + 1).is_some_and(|&n| n != ']') {
                self.i += 1;
                let Some(mut hi) = self.peek() else {
                    bail!("missing ']' in regex");
                };
                self.i += 1;
                if hi == '\\' {
                    match self.escape()? {
                        Err(ch) => hi = ch,
                        Ok(_) => bail!("bad class range in regex"),
                    }
                }
                if hi < lo {
                    bail!("bad class range {lo}-{hi} in regex");
                }
                items.push(ClassItem::Range(lo, hi));
            } else {
                items.push(ClassItem::Range(lo, lo));
            }
        }
        Ok(Re::Class(items, neg))
    }
}

fn class_has(items: &[ClassItem], c: char) -> bool {
    items.iter().any(|it| match *it {
        ClassItem::Range(a, b) => a <= c && c <= b,
        ClassItem::Digit(p) => c.is_ascii_digit() == p,
        ClassItem::Word(p) => is_word(c) == p,
        ClassItem::Space(p) => matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') == p,
    })
}

struct Matcher<'a> {
    s: &'a [char],
    steps: u64,
}

const MAX_STEPS: u64 = 50_000_000;

impl Matcher<'_> {
    /// Matches `res[0..]` at `pos`, then `k`.
    fn seq(
        &mut self,
        res: &[&Re],
        pos: usize,
        k: &mut dyn FnMut(&mut Self, usize) -> Result<bool, KernelError>,
    ) -> Result<bool, KernelError> {
        let Some((first, rest)) = res.split_first() else {
            return k(self, pos);
        };
        self.m(first, pos, &mut |me, p| me.seq(rest, p, k))
    }

    fn m(
        &mut self,
        re: &Re,
        pos: usize,
        k: &mut dyn FnMut(&mut Self, usize) -> Result<bool, KernelError>,
    ) -> Result<bool, KernelError> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            bail!("regex matching takes too long");
        }
        let s = self.s;
        match re {
            Re::Char(c) => {
                if s.get(pos) == Some(c) {
                    k(self, pos + 1)
                } else {
                    Ok(false)
                }
            }
            Re::Any => match s.get(pos) {
                Some(&c) if c != '\n' => k(self, pos + 1),
                _ => Ok(false),
            },
            Re::Class(items, neg) => match s.get(pos) {
                Some(&c) if class_has(items, c) != *neg => k(self, pos + 1),
                _ => Ok(false),
            },
            Re::Start => {
                if pos == 0 {
                    k(self, pos)
                } else {
                    Ok(false)
                }
            }
            Re::End => {
                if pos == s.len() {
                    k(self, pos)
                } else {
                    Ok(false)
                }
            }
            Re::WordBoundary(want) => {
                let before = pos > 0 && is_word(s[pos - 1]);
                let after = pos < s.len() && is_word(s[pos]);
                if (before != after) == *want {
                    k(self, pos)
                } else {
                    Ok(false)
                }
            }
            Re::Concat(items) => {
                let refs: Vec<&Re> = items.iter().collect();
                self.seq(&refs, pos, k)
            }
            Re::Alt(alts) => {
                for a in alts {
                    if self.m(a, pos, k)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Re::Repeat(inner, min, max) => self.rep(inner, *min, *max, 0, pos, k),
        }
    }

    fn rep(
        &mut self,
        inner: &Re,
        min: usize,
        max: Option<usize>,
        count: usize,
        pos: usize,
        k: &mut dyn FnMut(&mut Self, usize) -> Result<bool, KernelError>,
    ) -> Result<bool, KernelError> {
        if max.is_none_or(|m| count < m) {
            let more = self.m(inner, pos, &mut |me, p| {
                if p == pos && count >= min {
                    return Ok(false); // an empty iteration adds nothing
                }
                me.rep(inner, min, max, count + 1, p, k)
            })?;
            if more {
                return Ok(true);
            }
        }
        if count >= min {
            return k(self, pos);
        }
        Ok(false)
    }
}

fn parse_regex(pattern: &str) -> Result<Re, KernelError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut p = ReParser { s: &chars, i: 0 };
    let re = p.alt(0)?;
    if p.i != chars.len() {
        bail!("unbalanced ')' in regex {pattern:?}");
    }
    Ok(re)
}

fn full_match(re: &Re, text: &str) -> Result<bool, KernelError> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let mut m = Matcher {
        s: &chars,
        steps: 0,
    };
    m.m(re, 0, &mut |_, p| Ok(p == n))
}

pub fn regex_full_match(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let pattern = info
        .attrs
        .string("pattern")
        .ok_or_else(|| KernelError::new("RegexFullMatch needs the 'pattern' attribute"))?;
    let re = parse_regex(&pattern)?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let Some(vals) = x.string_values() else {
            bail!("X must be a string tensor, got {}", x.dtype());
        };
        let out: Vec<bool> = vals
            .iter()
            .map(|v| full_match(&re, v))
            .collect::<Result<_, _>>()?;
        Ok(vec![Value::Tensor(Tensor::from_vec(x.shape(), out)?)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let p = Tensor::scalar(-1i64);
        assert_eq!(position(&p, 3, false).unwrap(), 2);
        assert_eq!(position(&Tensor::scalar(3i64), 3, true).unwrap(), 3);
        assert!(position(&Tensor::scalar(3i64), 3, false).is_err());
        assert!(position(&Tensor::scalar(-4i64), 3, true).is_err());
    }

    #[test]
    fn type_check() {
        assert!(check_type(DataType::Float, &Tensor::scalar(1.0f32)).is_ok());
        assert!(check_type(DataType::Float, &Tensor::scalar(1i64)).is_err());
    }

    #[test]
    fn regex_full_match_cases() {
        let m = |p: &str, t: &str| full_match(&parse_regex(p).unwrap(), t).unwrap();
        assert!(m(r"www\.[\w.-]+\.\bcom\b", "www.example.com"));
        assert!(!m(r"www\.[\w.-]+\.\bcom\b", "www.example.co"));
        assert!(m(
            r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
            "john.doe@gmail.com"
        ));
        assert!(!m(
            r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
            "a@hotmail.com"
        ));
        assert!(m("a*b?", ""));
        assert!(m("(a|ab)(c|bcd)", "abcd"));
        assert!(!m("abc", "abcd"));
        assert!(m("[^0-9]+", "abc"));
        assert!(!m("[^0-9]+", "a1c"));
        assert!(m("(a*)*b", "aaab"));
        assert!(parse_regex("a(").is_err());
        assert!(parse_regex("a)").is_err());
        assert!(parse_regex("*a").is_err());
    }
}
