//! numpy-style rendering of tensors (`[[ 0.  3.]\n [ 6.  9.]]`).

use super::Tensor;

/// Arrays with more elements than this are summarised with `...`.
const SUMMARY_THRESHOLD: usize = 1000;
/// Items shown at each edge of a summarised axis.
const EDGE_ITEMS: usize = 3;

/// Formats one float the way numpy does for a whole array: `3.`, `0.5`,
/// `nan`, `inf`, with at most `precision` decimals.
pub fn format_scalar(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{:.*e}", precision, v);
        // trim mantissa zeros: 1.5000e-5 -> 1.5e-05
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = trim_float(m);
        let exp: i32 = e.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", exp.abs());
    }
    trim_float(&format!("{:.*}", precision, v))
}

/// A string quoted as Python (and numpy) print it: `'a b'`, `"it's"`,
/// `'say "hi"'`, `'both \' and "'`, with `\\`, `\n`, `\t`, `\r` and other
/// control characters escaped.
pub fn quote_str(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

fn trim_float(s: &str) -> String {
    if let Some(dot) = s.find('.') {
        let t = s.trim_end_matches('0');
        if t.len() <= dot + 1 {
            return s[..=dot].to_string();
        }
        return t.to_string();
    }
    format!("{s}.")
}

/// Renders a tensor numpy-style with floats at `precision` decimals.
pub fn render_tensor(t: &Tensor, precision: usize) -> String {
    let cells: Vec<String> = match t {
        Tensor::Str(a) => a.iter().map(|s| quote_str(s)).collect(),
        Tensor::Bool(a) => a
            .iter()
            .map(|&b| if b { "True" } else { "False" }.to_string())
            .collect(),
        Tensor::F32(_)
        | Tensor::F64(_)
        | Tensor::F16(_)
        | Tensor::BF16(_)
        | Tensor::Small { .. }
            if t.dtype().is_float() =>
        {
            t.to_f64_vec()
                .unwrap_or_default()
                .into_iter()
                .map(|v| format_scalar(v, precision))
                .collect()
        }
        _ => t
            .to_i64_vec()
            .map(|v| v.into_iter().map(|x| x.to_string()).collect())
            .or_else(|_| {
                t.to_f64_vec()
                    .map(|v| v.into_iter().map(|x| format!("{x}")).collect())
                    .ok_or(())
            })
            .unwrap_or_default(),
    };
    let cells = if let Tensor::U64(a) = t {
        a.iter().map(|v| v.to_string()).collect()
    } else {
        cells
    };
    let shape = t.shape().to_vec();
    if shape.is_empty() {
        return cells.first().cloned().unwrap_or_default();
    }
    let summarise = cells.len() > SUMMARY_THRESHOLD;
    if shape.len() > MAX_NESTED_RANK {
        // nested brackets past this rank are unreadable, and rendering
        // them recursively could exhaust the stack: print the values flat
        return render_flat(&cells, &shape, summarise);
    }
    // numbers align right in columns; strings are not padded (as numpy)
    let width = match t {
        Tensor::Str(_) => 0,
        _ => cells.iter().map(|c| c.chars().count()).max().unwrap_or(1),
    };
    let mut out = String::new();
    let strides: Vec<usize> = (0..shape.len())
        .map(|i| shape[i + 1..].iter().product())
        .collect();
    render_axis(
        &cells, &shape, &strides, 0, 0, width, summarise, &mut out, 1,
    );
    out
}

/// Tensors of higher rank are printed flat, with their shape.
pub const MAX_NESTED_RANK: usize = 32;

fn render_flat(cells: &[String], shape: &[usize], summarise: bool) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shown: Vec<&str> = if summarise && cells.len() > 2 * EDGE_ITEMS {
        cells[..EDGE_ITEMS]
            .iter()
            .map(String::as_str)
            .chain(std::iter::once("..."))
            .chain(cells[cells.len() - EDGE_ITEMS..].iter().map(String::as_str))
            .collect()
    } else {
        cells.iter().map(String::as_str).collect()
    };
    format!(
        "rank-{} tensor of shape ({}), values in order: [{}]",
        shape.len(),
        dims.join(", "),
        shown.join(" ")
    )
}

#[allow(clippy::too_many_arguments)]
fn render_axis(
    cells: &[String],
    shape: &[usize],
    strides: &[usize],
    axis: usize,
    offset: usize,
    width: usize,
    summarise: bool,
    out: &mut String,
    indent: usize,
) {
    out.push('[');
    let n = shape[axis];
    let idx: Vec<Option<usize>> = if summarise && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE_ITEMS..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    let last_axis = axis + 1 == shape.len();
    for (k, i) in idx.iter().enumerate() {
        if k > 0 {
            if last_axis {
                out.push(' ');
            } else {
                out.push('\n');
                for _ in 0..(shape.len() - axis - 2) {
                    out.push('\n');
                }
                for _ in 0..indent {
                    out.push(' ');
                }
            }
        }
        match i {
            None => out.push_str("..."),
            Some(i) => {
                let off = offset + i * strides[axis];
                if last_axis {
                    out.push_str(&format!("{:>width$}", cells[off]));
                } else {
                    render_axis(
                        cells,
                        shape,
                        strides,
                        axis + 1,
                        off,
                        width,
                        summarise,
                        out,
                        indent + 1,
                    );
                }
            }
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_100000_tensor_prints_flat() {
        let t = Tensor::from_vec(&vec![1; 100_000], vec![5i64]).unwrap();
        let s = render_tensor(&t, 4);
        assert!(
            s.starts_with("rank-100000 tensor of shape (1, 1,"),
            "{}",
            &s[..40]
        );
        assert!(s.ends_with("values in order: [5]"));
    }

    #[test]
    fn numpy_layout_of_a_float_matrix() {
        let t = Tensor::from_vec(&[4, 2], vec![0f32, 3., 6., 9., 12., 15., 18., 21.]).unwrap();
        assert_eq!(
            render_tensor(&t, 4),
            "[[ 0.  3.]\n [ 6.  9.]\n [12. 15.]\n [18. 21.]]"
        );
    }

    #[test]
    fn strings_are_quoted_as_python_does() {
        assert_eq!(quote_str("a b"), "'a b'");
        assert_eq!(quote_str("it's"), "\"it's\"");
        assert_eq!(quote_str("quote\""), "'quote\"'");
        assert_eq!(quote_str("both ' and \""), "'both \\' and \"'");
        assert_eq!(quote_str("a\\b\nc\u{1}"), "'a\\\\b\\nc\\x01'");
    }

    #[test]
    fn scalars_and_fractions() {
        assert_eq!(format_scalar(0.5, 4), "0.5");
        assert_eq!(format_scalar(2.0, 4), "2.");
        assert_eq!(format_scalar(-1.25, 4), "-1.25");
        assert_eq!(format_scalar(1e-7, 4), "1.e-07");
        let t = Tensor::from_vec(&[2], vec![1i64, -20]).unwrap();
        assert_eq!(render_tensor(&t, 4), "[  1 -20]");
    }
}
