//! The tensor-expression language of `set` and `run` (SPEC §4): literals,
//! constructors (`arange`, `zeros`, `rand`, `npy("f.npy")`...), and methods
//! (`.reshape`, `.astype`, `.T`, `.transpose`). Dimensions may be symbolic
//! expressions evaluated with the session's bindings.

mod syntax;

use crate::expr::{Bindings, Expr};
use crate::tensor::{self, DataType, Map, Tensor, Value};
use ndarray::IxDyn;
use std::path::Path;
pub use syntax::{parse_assignments, MAX_DEPTH};
use syntax::{Arg, Node};

/// A seeded random generator (xorshift64*), so `config seed N` reproduces.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(f64::MIN_POSITIVE);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// What expressions are evaluated with.
pub struct Env<'a> {
    pub bindings: &'a Bindings,
    pub rng: &'a mut Rng,
    /// Folder relative paths in `npy(...)`/`pb(...)` resolve against.
    pub base: &'a Path,
}

type R<T> = Result<T, String>;

/// Evaluates a tensor expression.
pub fn eval(text: &str, env: &mut Env) -> R<Value> {
    if text.trim().is_empty() {
        return Err("expected a tensor expression".into());
    }
    let node = syntax::parse(text)?;
    if let Node::Dict(entries) = &node {
        return Ok(Value::Map(map_literal(entries)?));
    }
    Ok(Value::Tensor(eval_node(&node, env)?))
}

/// A map from `{key: value, …}`: int or string keys (one kind, distinct),
/// values of one type as a list of them would have.
fn map_literal(entries: &[(Node, Node)]) -> R<Map> {
    let keys = if entries.iter().all(|(k, _)| matches!(k, Node::Str(_))) {
        let v: Vec<String> = entries
            .iter()
            .filter_map(|(k, _)| match k {
                Node::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        Tensor::from_vec(&[v.len()], v).map_err(|e| e.0)?
    } else if entries.iter().all(|(k, _)| matches!(k, Node::Int(_))) {
        let v: Vec<i64> = entries
            .iter()
            .filter_map(|(k, _)| match k {
                Node::Int(i) => Some(*i),
                _ => None,
            })
            .collect();
        Tensor::from_vec(&[v.len()], v).map_err(|e| e.0)?
    } else {
        return Err("map keys must be all integers or all strings".into());
    };
    if let Some((_, v)) = entries
        .iter()
        .find(|(_, v)| matches!(v, Node::List(_) | Node::Dict(_)))
    {
        return Err(format!(
            "map values must be single numbers or strings, got {}",
            if matches!(v, Node::List(_)) {
                "a list"
            } else {
                "a map"
            }
        ));
    }
    let values = literal(&Node::List(
        entries.iter().map(|(_, v)| v.clone()).collect(),
    ))?;
    Map::new(keys, values).map_err(|e| e.0)
}

fn eval_node(node: &Node, env: &mut Env) -> R<Tensor> {
    match node {
        Node::Call { name, args } => constructor(name, args, env),
        Node::Method { recv, name, args } => {
            let t = eval_node(recv, env)?;
            method(t, name, args.as_deref(), env)
        }
        Node::Dict(_) => Err("a map {key: value, …} can only be a whole input value".into()),
        lit => literal(lit),
    }
}

fn dim(text: &str, env: &Env) -> R<i64> {
    let e = Expr::parse(text).map_err(|e| format!("dimension '{text}': {e}"))?;
    e.eval(env.bindings)
        .map_err(|e| format!("dimension '{text}': {e}"))
}

/// Dimensions given either as `d1, d2, ...` or as one list `[d1, d2]`/`(d1, d2)`.
fn dims(args: &[Arg], env: &Env, allow_neg1: bool) -> R<Vec<i64>> {
    let list: Vec<String> = match args {
        [one] => match syntax::list_items(&one.text) {
            Some(items) => items?,
            None => vec![one.text.clone()],
        },
        _ => args.iter().map(|a| a.text.clone()).collect(),
    };
    let mut out = Vec::with_capacity(list.len());
    for a in &list {
        let d = dim(a, env)?;
        if d < 0 && !(allow_neg1 && d == -1) {
            return Err(format!("dimension {a} = {d} is negative"));
        }
        out.push(d);
    }
    Ok(out)
}

/// A constructor's shape, checked against the memory budget (the values
/// are built in f64, then converted: 16 bytes per element at most).
fn shape_usize(d: &[i64]) -> R<Vec<usize>> {
    let sh = d
        .iter()
        .map(|&x| usize::try_from(x).map_err(|_| format!("dimension {x} is negative")))
        .collect::<R<Vec<usize>>>()?;
    crate::tensor::budget::check(&sh, BUILD_BYTES).map_err(|e| e.to_string())?;
    Ok(sh)
}

/// Bytes per element while a constructor builds its tensor.
const BUILD_BYTES: usize = 16;

/// Checks a 1-D constructor length of `n` (a float count) against the budget.
fn length(n: f64, what: &str) -> R<usize> {
    if n.is_nan() || n >= u64::MAX as f64 {
        return Err(format!("{what} has too many elements ({n})"));
    }
    let n = n.max(0.0) as usize;
    crate::tensor::budget::check(&[n], BUILD_BYTES).map_err(|e| format!("{what}: {e}"))?;
    Ok(n)
}

/// A number argument: a numeric literal, or a dimension expression.
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn f64(&self) -> f64 {
        match *self {
            Number::Int(v) => v as f64,
            Number::Float(v) => v,
        }
    }
}

fn number(a: &Arg, env: &Env) -> R<Number> {
    match &a.node {
        Some(Node::Int(v)) => Ok(Number::Int(*v)),
        Some(Node::Float(v)) => Ok(Number::Float(*v)),
        Some(_) => Err(format!("expected a number, got '{}'", a.text)),
        None => dim(&a.text, env).map(Number::Int),
    }
}

fn f64_tensor(shape: &[usize], v: Vec<f64>) -> R<Tensor> {
    Tensor::from_vec(shape, v).map_err(|e| e.0)
}

fn constructor(name: &str, args: &[Arg], env: &mut Env) -> R<Tensor> {
    let want = |n: std::ops::RangeInclusive<usize>, usage: &str| -> R<()> {
        if n.contains(&args.len()) {
            Ok(())
        } else {
            Err(format!("usage: {usage}"))
        }
    };
    match name {
        "arange" => {
            want(1..=3, "arange(stop) or arange(start, stop[, step])")?;
            let vals: Vec<Number> = args.iter().map(|a| number(a, env)).collect::<R<_>>()?;
            if vals.iter().all(|v| matches!(v, Number::Int(_))) {
                let ints: Vec<i64> = vals
                    .iter()
                    .map(|v| match v {
                        Number::Int(i) => *i,
                        Number::Float(_) => 0,
                    })
                    .collect();
                let (start, stop, step) = match ints[..] {
                    [stop] => (0, stop, 1),
                    [start, stop] => (start, stop, 1),
                    [start, stop, step, ..] => (start, stop, step),
                    [] => unreachable!("checked by want"),
                };
                if step == 0 {
                    return Err("arange step must not be 0".into());
                }
                let span = (stop as i128 - start as i128) as f64 / step as f64;
                let n = length(span.ceil(), "arange")?;
                let v: Vec<i64> = (0..n as i64).map(|i| start + i * step).collect();
                return Tensor::from_vec(&[v.len()], v).map_err(|e| e.0);
            }
            let f: Vec<f64> = vals.iter().map(Number::f64).collect();
            let (start, stop, step) = match f[..] {
                [stop] => (0.0, stop, 1.0),
                [start, stop] => (start, stop, 1.0),
                [start, stop, step, ..] => (start, stop, step),
                [] => unreachable!("checked by want"),
            };
            if step == 0.0 {
                return Err("arange step must not be 0".into());
            }
            let n = length(((stop - start) / step).ceil(), "arange")?;
            let v: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
            f64_tensor(&[v.len()], v)
        }
        "zeros" | "ones" | "rand" | "randn" => {
            let sh = shape_usize(&dims(args, env, false)?)?;
            let n: usize = sh.iter().product();
            let v: Vec<f64> = match name {
                "zeros" => vec![0.0; n],
                "ones" => vec![1.0; n],
                "rand" => (0..n).map(|_| env.rng.uniform()).collect(),
                _ => (0..n).map(|_| env.rng.normal()).collect(),
            };
            f64_tensor(&sh, v)
        }
        "full" => {
            want(2..=2, "full([d...], value)")?;
            let sh = shape_usize(&dims(&args[..1], env, false)?)?;
            let fill = match &args[1].node {
                Some(n) => eval_node(n, env)?,
                None => return Err(format!("full: cannot read the value '{}'", args[1].text)),
            };
            if fill.len() != 1 {
                return Err("full: the value must be a scalar".into());
            }
            if sh.is_empty() {
                return fill.reshape(&[]).map_err(|e| e.0);
            }
            let flat = fill.reshape(&[1]).map_err(|e| e.0)?;
            Ok(crate::map_array!(&flat, a => a
                .broadcast(IxDyn(&sh))
                .ok_or("full: cannot broadcast the value")?
                .to_owned()))
        }
        "eye" => {
            want(1..=1, "eye(n)")?;
            let n = shape_usize(&[dim(&args[0].text, env)?])?[0];
            shape_usize(&[n as i64, n as i64])?;
            let mut v = vec![0.0; n * n];
            for i in 0..n {
                v[i * n + i] = 1.0;
            }
            f64_tensor(&[n, n], v)
        }
        "linspace" => {
            want(3..=3, "linspace(a, b, n)")?;
            let a = number(&args[0], env)?.f64();
            let b = number(&args[1], env)?.f64();
            let n = shape_usize(&[dim(&args[2].text, env)?])?[0];
            let v: Vec<f64> = (0..n)
                .map(|i| {
                    if n == 1 {
                        a
                    } else {
                        a + (b - a) * i as f64 / (n - 1) as f64
                    }
                })
                .collect();
            f64_tensor(&[n], v)
        }
        "npy" | "pb" => {
            want(1..=1, &format!("{name}(\"file\")"))?;
            let Some(Node::Str(path)) = &args[0].node else {
                return Err(format!("{name}: expected a file name in quotes"));
            };
            let p = env.base.join(expand_home(path));
            let bytes =
                crate::files::read_regular(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            if name == "npy" {
                tensor::read_npy(&bytes).map_err(|e| format!("{}: {e}", p.display()))
            } else {
                match crate::proto::value_from_pb_bytes(&bytes, crate::proto::PbKind::Tensor) {
                    Ok(Value::Tensor(t)) => Ok(t),
                    Ok(_) => Err(format!("{}: not a tensor", p.display())),
                    Err(e) => Err(format!("{}: {e}", p.display())),
                }
            }
        }
        other => Err(format!(
            "unknown function '{other}' (arange, zeros, ones, full, eye, linspace, rand, randn, npy, pb)"
        )),
    }
}

/// `~/x` → `$HOME/x`.
fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => Path::new(path).to_path_buf(),
    }
}

fn method(t: Tensor, name: &str, args: Option<&[Arg]>, env: &mut Env) -> R<Tensor> {
    let args = args.unwrap_or_default();
    match name {
        "reshape" => {
            let d = dims(args, env, true)?;
            if d.iter().filter(|&&x| x == -1).count() > 1 {
                return Err("reshape: only one -1 is allowed".into());
            }
            let known = d
                .iter()
                .filter(|&&x| x != -1)
                .try_fold(1i64, |a, &x| a.checked_mul(x))
                .ok_or_else(|| format!("reshape: {d:?} is too large"))?;
            let total = t.len() as i64;
            let sh: Vec<i64> = d
                .iter()
                .map(|&x| {
                    if x == -1 {
                        if known == 0 {
                            0
                        } else {
                            total / known
                        }
                    } else {
                        x
                    }
                })
                .collect();
            let sh = shape_usize(&sh)?;
            t.reshape(&sh).map_err(|e| e.0)
        }
        "astype" => {
            let [arg] = args else {
                return Err("usage: .astype(DTYPE)".into());
            };
            let name = match &arg.node {
                Some(Node::Str(s)) => s.as_str(),
                _ => arg.text.as_str(),
            };
            let dt = DataType::from_name(name).ok_or_else(|| format!("unknown dtype '{name}'"))?;
            t.cast_to(dt).map_err(|e| e.0)
        }
        "T" | "transpose" => {
            let r = t.rank();
            let perm: Vec<usize> = if name == "T" || args.is_empty() {
                (0..r).rev().collect()
            } else {
                let p = dims(args, env, false)?;
                let mut seen = vec![false; r];
                if p.len() != r
                    || p.iter()
                        .any(|&a| a as usize >= r || std::mem::replace(&mut seen[a as usize], true))
                {
                    return Err(format!("transpose: {p:?} is not a permutation of {r} axes"));
                }
                p.into_iter().map(|a| a as usize).collect()
            };
            Ok(crate::map_array!(&t, a => a
                .view()
                .permuted_axes(IxDyn(&perm))
                .as_standard_layout()
                .into_owned()))
        }
        other => Err(format!(
            "unknown method '.{other}' (reshape, astype, T, transpose)"
        )),
    }
}

/// A literal's shape, and its leaves in order; the nesting is walked with
/// an explicit stack (its depth is already bounded by the parser).
fn flatten(lit: &Node) -> R<(Vec<usize>, Vec<&Node>)> {
    let mut shape = Vec::new();
    let mut cur = lit;
    while let Node::List(items) = cur {
        shape.push(items.len());
        match items.first() {
            Some(first) => cur = first,
            None => break,
        }
    }
    let mut leaves = Vec::new();
    let mut stack: Vec<(&Node, usize)> = vec![(lit, 0)];
    while let Some((node, depth)) = stack.pop() {
        match node {
            Node::List(items) => {
                if depth >= shape.len() || items.len() != shape[depth] {
                    return Err("the nested lists are not rectangular".into());
                }
                stack.extend(items.iter().rev().map(|it| (it, depth + 1)));
            }
            leaf => {
                if depth != shape.len() {
                    return Err("the nested lists are not rectangular".into());
                }
                leaves.push(leaf);
            }
        }
    }
    Ok((shape, leaves))
}

/// Builds the tensor of a literal: strings, booleans, exact integers
/// (int64), or floats (double) when any number has a fraction or exponent.
fn literal(lit: &Node) -> R<Tensor> {
    let (shape, flat) = flatten(lit)?;
    if flat.iter().any(|l| matches!(l, Node::Str(_))) {
        let v: Vec<String> = flat
            .into_iter()
            .map(|l| match l {
                Node::Str(s) => Ok(s.clone()),
                _ => Err("a list mixes strings and numbers".to_string()),
            })
            .collect::<R<_>>()?;
        return Tensor::from_vec(&shape, v).map_err(|e| e.0);
    }
    if !flat.is_empty() && flat.iter().all(|l| matches!(l, Node::Bool(_))) {
        let v = flat
            .into_iter()
            .map(|l| matches!(l, Node::Bool(true)))
            .collect();
        return Tensor::from_vec(&shape, v).map_err(|e| e.0);
    }
    if flat.iter().any(|l| matches!(l, Node::Float(_))) {
        let v: Vec<f64> = flat
            .into_iter()
            .map(|l| match *l {
                Node::Float(x) => Ok(x),
                Node::Int(x) => Ok(x as f64),
                Node::Bool(b) => Ok(b as i64 as f64),
                _ => Err("a list element is not a number".to_string()),
            })
            .collect::<R<_>>()?;
        return f64_tensor(&shape, v);
    }
    let v: Vec<i64> = flat
        .into_iter()
        .map(|l| match *l {
            Node::Int(x) => Ok(x),
            Node::Bool(b) => Ok(b as i64),
            _ => Err("a list element is not a number".to_string()),
        })
        .collect::<R<_>>()?;
    Tensor::from_vec(&shape, v).map_err(|e| e.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> R<Tensor> {
        let b = Bindings::from([("N".to_string(), 2)]);
        let mut rng = Rng::new(0);
        let mut env = Env {
            bindings: &b,
            rng: &mut rng,
            base: Path::new("."),
        };
        eval(s, &mut env).map(|v| v.into_tensor().unwrap())
    }

    #[test]
    fn seed_input() {
        let t = ev("arange(8).reshape(2,4)").unwrap();
        assert_eq!(t.shape(), &[2, 4]);
        assert_eq!(t.dtype(), DataType::Int64);
        assert_eq!(t.to_i64_vec().unwrap(), (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn literals_and_methods() {
        assert_eq!(ev("2.5").unwrap().to_f64_vec().unwrap(), vec![2.5]);
        assert_eq!(ev("[[1.0, 2.0], [3.0, 4.0]]").unwrap().shape(), &[2, 2]);
        assert_eq!(ev("[\"a\", \"b\"]").unwrap().dtype(), DataType::String);
        assert_eq!(ev("true").unwrap().dtype(), DataType::Bool);
        assert_eq!(ev("rand(N, 4)").unwrap().shape(), &[2, 4]);
        assert_eq!(ev("zeros(2,3).T").unwrap().shape(), &[3, 2]);
        assert_eq!(
            ev("ones(2,3,4).transpose(2,0,1)").unwrap().shape(),
            &[4, 2, 3]
        );
        assert_eq!(
            ev("arange(6).astype(float)").unwrap().dtype(),
            DataType::Float
        );
        assert_eq!(
            ev("full([2, N], 7)").unwrap().to_i64_vec().unwrap(),
            vec![7; 4]
        );
        assert_eq!(ev("arange(12).reshape(-1, 3)").unwrap().shape(), &[4, 3]);
        assert_eq!(
            ev("linspace(0, 1, 3)").unwrap().to_f64_vec().unwrap(),
            vec![0.0, 0.5, 1.0]
        );
        assert_eq!(
            ev("eye(2)").unwrap().to_f64_vec().unwrap(),
            vec![1.0, 0.0, 0.0, 1.0]
        );
    }

    #[test]
    fn integers_stay_exact() {
        let t = ev("[9007199254740993, -9223372036854775808]").unwrap();
        assert_eq!(t.to_i64_vec().unwrap(), vec![9007199254740993, i64::MIN]);
        assert_eq!(
            ev("arange(9007199254740993, 9007199254740995)")
                .unwrap()
                .to_i64_vec()
                .unwrap(),
            vec![9007199254740993, 9007199254740994]
        );
        assert_eq!(ev(" rand( N , 4 ) ").unwrap().shape(), &[2, 4]);
        assert_eq!(
            ev("[\"a b\", 'it\\'s']").unwrap().string_values().unwrap(),
            vec!["a b", "it's"]
        );
    }

    #[test]
    fn errors_are_clear() {
        assert!(ev("[[1, 2], [3]]").unwrap_err().contains("rectangular"));
        assert!(ev("rand(M)").unwrap_err().contains("M"));
        assert!(ev("zeros(100000, 100000, 100000)")
            .unwrap_err()
            .contains("over the memory budget"));
        assert!(ev("arange(0, 1e300)")
            .unwrap_err()
            .contains("arange has too many elements"));
        assert!(ev("arange(8).reshape(3, 3)").is_err());
        assert!(ev("foo(1)").unwrap_err().contains("unknown function"));
        assert!(ev("[1, 2").is_err());
        assert!(ev("npy(\"/dev/zero\")")
            .unwrap_err()
            .contains("not a regular file"));
        assert!(ev("npy(\"/nonexistent/x.npy\")").is_err());
    }
}
