//! The SVM kernel functions (`kernel_type` with `kernel_params` = gamma,
//! coef0, degree) shared by `SVMClassifier` and `SVMRegressor`.

use crate::bail;
use crate::ops::Attrs;
use crate::ops::KernelError;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SvmKernel {
    Linear,
    Poly { gamma: f64, coef0: f64, degree: f64 },
    Rbf { gamma: f64 },
    Sigmoid { gamma: f64, coef0: f64 },
}

impl SvmKernel {
    /// Decodes `kernel_type` (default LINEAR) and `kernel_params`.
    pub fn decode(a: &Attrs) -> Result<SvmKernel, KernelError> {
        let t = a
            .string_checked("kernel_type")?
            .unwrap_or_else(|| "LINEAR".into());
        let p = a.floats_checked("kernel_params")?.unwrap_or_default();
        if !p.is_empty() && p.len() != 3 {
            bail!(
                "attribute 'kernel_params' must hold gamma, coef0 and degree, got {} values",
                p.len()
            );
        }
        let get = |i: usize| p.get(i).map(|&v| v as f64).unwrap_or(0.0);
        let (gamma, coef0, degree) = (get(0), get(1), get(2));
        Ok(match t.as_str() {
            "LINEAR" => SvmKernel::Linear,
            "POLY" => SvmKernel::Poly {
                gamma,
                coef0,
                degree,
            },
            "RBF" => SvmKernel::Rbf { gamma },
            "SIGMOID" => SvmKernel::Sigmoid { gamma, coef0 },
            other => {
                bail!("attribute 'kernel_type' must be LINEAR, POLY, RBF or SIGMOID, got '{other}'")
            }
        })
    }

    /// The kernel in single precision, as onnxruntime computes it: the dot
    /// product (or squared distance) summed in f32 in feature order, then
    /// `gamma·dot + coef0` for POLY and SIGMOID, a power of 2 or 3 by
    /// multiplication, `exp(-gamma·d²)` for RBF.
    pub fn eval_f32(self, a: &[f32], b: &[f32]) -> f32 {
        let dot = || a.iter().zip(b).fold(0.0f32, |s, (x, y)| s + x * y);
        match self {
            SvmKernel::Linear => dot(),
            SvmKernel::Poly {
                gamma,
                coef0,
                degree,
            } => {
                let v = gamma as f32 * dot() + coef0 as f32;
                if degree == 2.0 {
                    v * v
                } else if degree == 3.0 {
                    v * v * v
                } else {
                    v.powf(degree as f32)
                }
            }
            SvmKernel::Rbf { gamma } => {
                let d2 = a.iter().zip(b).fold(0.0f32, |s, (x, y)| {
                    let d = x - y;
                    s + d * d
                });
                (-(gamma as f32) * d2).exp()
            }
            SvmKernel::Sigmoid { gamma, coef0 } => (gamma as f32 * dot() + coef0 as f32).tanh(),
        }
    }
}
