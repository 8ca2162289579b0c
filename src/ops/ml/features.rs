//! The input rows of an ML operator: `X` of shape `[N, C]` (or `[C]`, one
//! row), in any numeric type, read as f64 so that float thresholds compare
//! exactly as onnxruntime compares them in the input's own type.

use crate::bail;
use crate::expr::Expr;
use crate::ops::InferCtx;
use crate::ops::KernelError;
use crate::tensor::Tensor;
use crate::value_type::Dim;

/// `N` rows of `C` features, row-major.
pub struct Rows {
    pub n: usize,
    pub c: usize,
    pub data: Vec<f64>,
}

impl Rows {
    /// The features of row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.c..(i + 1) * self.c]
    }
}

/// Reads `X` as rows: rank 1 is one row, rank 2 is `[N, C]`; anything else,
/// or a string tensor, is an error naming `what`.
pub fn rows(x: &Tensor, what: &str) -> Result<Rows, KernelError> {
    let (n, c) = match x.shape() {
        [c] => (1, *c),
        [n, c] => (*n, *c),
        s => bail!("{what} must have rank 1 or 2 ([N, C]), got shape {s:?}"),
    };
    let Some(data) = x.to_f64_vec() else {
        bail!("{what} must be numeric, got {}", x.dtype());
    };
    Ok(Rows { n, c, data })
}

/// The number of rows of input `i` as inference knows it: `N` of `[N, C]`,
/// 1 for a rank-1 input, `None` when the rank is unknown.
pub fn row_count(cx: &InferCtx, i: usize) -> Option<Dim> {
    match cx.shape(i)? {
        [_] => Some(Some(Expr::int(1))),
        [n, _] => Some(n.clone()),
        _ => None,
    }
}
