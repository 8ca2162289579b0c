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

/// How [`render_tensor_with`] prints.
#[derive(Clone, Copy, Debug)]
pub struct PrintOptions {
    /// Decimals of floats.
    pub precision: usize,
    /// Tensors with more elements are summarised (`usize::MAX`: never).
    pub threshold: usize,
    /// Rows longer than this wrap (numpy's `linewidth`).
    pub line_width: usize,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            precision: 4,
            threshold: SUMMARY_THRESHOLD,
            line_width: 75,
        }
    }
}

/// Renders a tensor numpy-style with floats at `precision` decimals.
pub fn render_tensor(t: &Tensor, precision: usize) -> String {
    render_tensor_with(
        t,
        &PrintOptions {
            precision,
            ..PrintOptions::default()
        },
    )
}

/// Renders a tensor numpy-style: a tensor of more than `threshold`
/// elements shows the first and last [`EDGE_ITEMS`] of each axis around
/// `...`, and only the elements shown are ever formatted (printing a
/// 1 GiB tensor formats a few dozen numbers).
pub fn render_tensor_with(t: &Tensor, o: &PrintOptions) -> String {
    let summarise = t.len() > o.threshold;
    let text = render_as(t, o, summarise);
    // under the threshold (so cheap to print in full) but a wall of lines
    if !summarise && o.threshold != usize::MAX && text.lines().count() > MAX_FULL_LINES {
        return render_as(t, o, true);
    }
    text
}

fn render_as(t: &Tensor, o: &PrintOptions, summarise: bool) -> String {
    let shape = t.shape().to_vec();
    let shown = shown_indices(&shape, summarise);
    let cells = cell_texts(&picked(t, &shown), o.precision);
    if shape.is_empty() {
        return cells.first().cloned().unwrap_or_default();
    }
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
    let strides: Vec<usize> = (0..shape.len())
        .map(|i| shape[i + 1..].iter().product())
        .collect();
    let mut r = Renderer {
        cells: &cells,
        shown: &shown,
        shape: &shape,
        strides: &strides,
        width,
        summarise,
        line_width: o.line_width,
        out: String::new(),
        line_start: 0,
    };
    r.axis(0, 0);
    r.out
}

/// A tensor whose full print would take more lines than this prints
/// summarised too (a (1,1000,1,1) classifier output is 2,000 lines in full).
pub const MAX_FULL_LINES: usize = 50;

/// The flat indices of the elements printed, in order.
fn shown_indices(shape: &[usize], summarise: bool) -> Vec<usize> {
    let mut out = Vec::new();
    if shape.contains(&0) {
        return out;
    }
    if shape.len() > MAX_NESTED_RANK {
        let n: usize = shape.iter().product();
        if summarise && n > 2 * EDGE_ITEMS {
            out.extend(0..EDGE_ITEMS);
            out.extend(n - EDGE_ITEMS..n);
        } else {
            out.extend(0..n);
        }
        return out;
    }
    fn walk(shape: &[usize], axis: usize, offset: usize, summarise: bool, out: &mut Vec<usize>) {
        if axis == shape.len() {
            out.push(offset);
            return;
        }
        let stride: usize = shape[axis + 1..].iter().product();
        for i in axis_indices(shape[axis], summarise).into_iter().flatten() {
            walk(shape, axis + 1, offset + i * stride, summarise, out);
        }
    }
    walk(shape, 0, 0, summarise, &mut out);
    out
}

/// The indices printed along an axis of `n`; `None` stands for `...`.
fn axis_indices(n: usize, summarise: bool) -> Vec<Option<usize>> {
    if summarise && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE_ITEMS..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    }
}

/// A rank-1 tensor of the elements at the (sorted) flat indices `idx`.
fn picked(t: &Tensor, idx: &[usize]) -> Tensor {
    fn pick<T: Clone>(a: &ndarray::ArrayD<T>, idx: &[usize]) -> ndarray::ArrayD<T> {
        let v: Vec<T> = match a.as_slice() {
            Some(s) => idx.iter().map(|&i| s[i].clone()).collect(),
            None => {
                let mut v = Vec::with_capacity(idx.len());
                let mut want = idx.iter().peekable();
                for (i, x) in a.iter().enumerate() {
                    if want.peek() == Some(&&i) {
                        v.push(x.clone());
                        want.next();
                    }
                }
                v
            }
        };
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[v.len()]), v)
            .expect("a vector is a rank-1 array of its length")
    }
    crate::map_array!(t, a => pick(a, idx))
}

/// Each element's text: floats at `precision` decimals, integers whole,
/// booleans `True`/`False`, strings quoted.
fn cell_texts(t: &Tensor, precision: usize) -> Vec<String> {
    match t {
        Tensor::Str(a) => a.iter().map(|s| quote_str(s)).collect(),
        _ => t
            .head_scalars(t.len())
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.table_text(precision))
            .collect(),
    }
}

/// Tensors of higher rank are printed flat, with their shape.
pub const MAX_NESTED_RANK: usize = 32;

fn render_flat(cells: &[String], shape: &[usize], summarise: bool) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let n: usize = shape.iter().product();
    let shown: Vec<&str> = if summarise && n > 2 * EDGE_ITEMS {
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

/// The nested-bracket printer.
struct Renderer<'a> {
    /// Texts of the shown elements, in the order of `shown`.
    cells: &'a [String],
    shown: &'a [usize],
    shape: &'a [usize],
    strides: &'a [usize],
    width: usize,
    summarise: bool,
    line_width: usize,
    out: String,
    /// Byte offset in `out` where the current line starts.
    line_start: usize,
}

impl Renderer<'_> {
    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.line_start = self.out.len();
        for _ in 0..indent {
            self.out.push(' ');
        }
    }

    fn axis(&mut self, axis: usize, offset: usize) {
        self.out.push('[');
        let rank = self.shape.len();
        let last_axis = axis + 1 == rank;
        for (k, i) in axis_indices(self.shape[axis], self.summarise)
            .into_iter()
            .enumerate()
        {
            let text = match i {
                None => "...".to_string(),
                Some(i) if last_axis => {
                    let at = self.shown.binary_search(&(offset + i)).unwrap_or(0);
                    let cell = self.cells.get(at).map(String::as_str).unwrap_or("");
                    format!("{cell:>w$}", w = self.width)
                }
                Some(_) => String::new(),
            };
            if k > 0 {
                if last_axis {
                    // wrap a row that would pass the line width (the
                    // closing brackets count too)
                    let col = self.out[self.line_start..].chars().count();
                    if col + 1 + text.chars().count() + (rank - axis) > self.line_width {
                        self.newline(axis + 1);
                    } else {
                        self.out.push(' ');
                    }
                } else {
                    for _ in 0..(rank - axis - 1) {
                        self.newline(0);
                    }
                    for _ in 0..=axis {
                        self.out.push(' ');
                    }
                }
            }
            match i {
                Some(i) if !last_axis => self.axis(axis + 1, offset + i * self.strides[axis]),
                _ => self.out.push_str(&text),
            }
        }
        self.out.push(']');
    }
}

/// Renders a map as Python prints a dict: `{'cat': 0.25, 'dog': 0.75}`,
/// floats at `o.precision`; past `o.threshold` entries the first and last
/// [`EDGE_ITEMS`] are shown around `...`.
pub fn render_map(m: &super::Map, o: &PrintOptions) -> String {
    let n = m.len();
    let shown: Vec<usize> = if n > o.threshold {
        (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
    } else {
        (0..n).collect()
    };
    // one pass over each tensor; only the entries shown are formatted
    let texts = |t: &Tensor| -> Vec<String> {
        match t {
            Tensor::Str(a) => {
                let all: Vec<&String> = a.iter().collect();
                shown.iter().map(|&i| quote_str(all[i])).collect()
            }
            _ => {
                let all = t.head_scalars(n).unwrap_or_default();
                shown
                    .iter()
                    .map(|&i| {
                        all.get(i)
                            .map(|v| v.table_text(o.precision))
                            .unwrap_or_default()
                    })
                    .collect()
            }
        }
    };
    let (keys, values) = (texts(m.keys()), texts(m.values()));
    let mut parts: Vec<String> = Vec::with_capacity(shown.len() + 1);
    for j in 0..shown.len() {
        if n > o.threshold && j == EDGE_ITEMS {
            parts.push("...".into());
        }
        parts.push(format!("{}: {}", keys[j], values[j]));
    }
    format!("{{{}}}", parts.join(", "))
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
    fn a_wall_of_lines_is_summarised_below_the_threshold() {
        // 1000 elements is not over numpy's threshold, but (1,1000,1,1) is
        // 2,000 lines in full and (1,1000) 84 wrapped lines
        for shape in [vec![1, 1000, 1, 1], vec![1, 1000]] {
            let t = Tensor::from_vec(&shape, vec![0.5f32; 1000]).unwrap();
            let text = render_tensor(&t, 4);
            assert!(text.lines().count() <= 20, "{shape:?}: {text}");
            assert!(text.contains("..."), "{text}");
            let full = render_tensor_with(
                &t,
                &PrintOptions {
                    threshold: usize::MAX,
                    ..PrintOptions::default()
                },
            );
            assert_eq!(full.matches("0.5").count(), 1000);
        }
        // a small matrix stays whole
        let t = Tensor::from_vec(&[10, 10], vec![1i64; 100]).unwrap();
        assert!(!render_tensor(&t, 4).contains("..."));
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
