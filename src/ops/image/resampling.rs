//! What the image operators share: Resize's and Upsample's separable
//! interpolation (nearest / linear / cubic, every coordinate
//! transformation, antialias, axes, keep_aspect_ratio_policy: per output
//! index a list of (input index, weight) taps, applied one axis at a time
//! in f64), their output shape rule, the cubic kernel and the conversion
//! back to the input's type.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{KernelError, NodeInfo};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor};
use half::{bf16, f16};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Nearest,
    Linear,
    Cubic,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Coord {
    HalfPixel,
    HalfPixelSymmetric,
    PytorchHalfPixel,
    AlignCorners,
    Asymmetric,
    TfCropAndResize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Nearest {
    RoundPreferFloor,
    RoundPreferCeil,
    Floor,
    Ceil,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    Stretch,
    NotLarger,
    NotSmaller,
}

/// The decoded attributes of a Resize / Upsample node.
#[derive(Clone, Debug)]
pub struct Spec {
    pub mode: Mode,
    pub coord: Coord,
    pub nearest: Nearest,
    pub cubic_a: f64,
    pub exclude_outside: bool,
    pub extrapolation: f64,
    pub antialias: bool,
    pub axes: Option<Vec<i64>>,
    pub policy: Policy,
}

pub fn parse_mode(s: &str) -> Result<Mode, KernelError> {
    Ok(match s {
        "nearest" => Mode::Nearest,
        "linear" | "bilinear" | "trilinear" => Mode::Linear,
        "cubic" | "bicubic" => Mode::Cubic,
        other => bail!("unknown mode '{other}'"),
    })
}

pub(super) fn spec_of(info: &NodeInfo, upsample: bool) -> Result<Spec, KernelError> {
    let a = &info.attrs;
    let mode = parse_mode(&a.string_or("mode", "nearest"))?;
    let old = upsample || info.opset < 11;
    let coord = if old {
        Coord::Asymmetric
    } else {
        match a
            .string_or("coordinate_transformation_mode", "half_pixel")
            .as_str()
        {
            "half_pixel" => Coord::HalfPixel,
            "half_pixel_symmetric" => Coord::HalfPixelSymmetric,
            "pytorch_half_pixel" => Coord::PytorchHalfPixel,
            "align_corners" => Coord::AlignCorners,
            "asymmetric" => Coord::Asymmetric,
            "tf_crop_and_resize" => Coord::TfCropAndResize,
            "tf_half_pixel_for_nn" => Coord::HalfPixel,
            other => bail!("unknown coordinate_transformation_mode '{other}'"),
        }
    };
    let nearest = if old {
        Nearest::Floor
    } else {
        match a.string_or("nearest_mode", "round_prefer_floor").as_str() {
            "round_prefer_floor" => Nearest::RoundPreferFloor,
            "round_prefer_ceil" => Nearest::RoundPreferCeil,
            "floor" => Nearest::Floor,
            "ceil" => Nearest::Ceil,
            other => bail!("unknown nearest_mode '{other}'"),
        }
    };
    let policy = match a.string_or("keep_aspect_ratio_policy", "stretch").as_str() {
        "stretch" => Policy::Stretch,
        "not_larger" => Policy::NotLarger,
        "not_smaller" => Policy::NotSmaller,
        other => bail!("unknown keep_aspect_ratio_policy '{other}'"),
    };
    Ok(Spec {
        mode,
        coord,
        nearest,
        cubic_a: a.float_or("cubic_coeff_a", -0.75) as f64,
        exclude_outside: a.int_or("exclude_outside", 0) != 0,
        extrapolation: a.float_or("extrapolation_value", 0.0) as f64,
        antialias: a.int_or("antialias", 0) != 0,
        axes: a.ints("axes"),
        policy,
    })
}

/// Output sizes and scales of every axis from scales or sizes.
pub fn out_geometry(
    spec: &Spec,
    in_shape: &[usize],
    scales: Option<&[f64]>,
    sizes: Option<&[i64]>,
) -> Result<(Vec<usize>, Vec<f64>), KernelError> {
    let r = in_shape.len();
    let axes: Vec<usize> = match &spec.axes {
        Some(ax) => {
            let mut v = Vec::with_capacity(ax.len());
            for &a in ax {
                let n = crate::ops::kernels::norm_axis(a, r)?;
                if v.contains(&n) {
                    bail!("axes {ax:?} repeat axis {n}");
                }
                v.push(n);
            }
            v
        }
        None => (0..r).collect(),
    };
    let mut out: Vec<usize> = in_shape.to_vec();
    let mut sc = vec![1.0f64; r];
    match (scales, sizes) {
        (Some(s), _) if !s.is_empty() => {
            if s.len() != axes.len() {
                bail!(
                    "scales has {} values, {} axes are resized",
                    s.len(),
                    axes.len()
                );
            }
            for (&a, &v) in axes.iter().zip(s) {
                if v.is_nan() || v <= 0.0 || !v.is_finite() {
                    bail!("scale {v} must be positive");
                }
                let o = (in_shape[a] as f64 * v).floor();
                if o > 1e12 {
                    bail!("output size {o} is too large");
                }
                out[a] = o as usize;
                sc[a] = v;
            }
        }
        (_, Some(z)) if !z.is_empty() => {
            if z.len() != axes.len() {
                bail!(
                    "sizes has {} values, {} axes are resized",
                    z.len(),
                    axes.len()
                );
            }
            if z.iter().any(|&v| !(0..=1_000_000_000_000).contains(&v)) {
                bail!("sizes {z:?} must be non-negative and reasonable");
            }
            match spec.policy {
                Policy::Stretch => {
                    for (&a, &v) in axes.iter().zip(z) {
                        out[a] = v as usize;
                        sc[a] = if in_shape[a] == 0 {
                            1.0
                        } else {
                            v as f64 / in_shape[a] as f64
                        };
                    }
                }
                p => {
                    let ratios = axes
                        .iter()
                        .zip(z)
                        .map(|(&a, &v)| v as f64 / in_shape[a].max(1) as f64);
                    let s = if p == Policy::NotLarger {
                        ratios.fold(f64::INFINITY, f64::min)
                    } else {
                        ratios.fold(0.0, f64::max)
                    };
                    for &a in &axes {
                        out[a] = (s * in_shape[a] as f64 + 0.5).floor() as usize;
                        sc[a] = s;
                    }
                }
            }
        }
        _ => bail!("Resize needs scales or sizes"),
    }
    Ok((out, sc))
}

/// Maps an output coordinate to the input's.
pub(super) fn to_input(
    spec: &Spec,
    x: f64,
    len_in: usize,
    len_out: usize,
    scale: f64,
    roi: (f64, f64),
) -> f64 {
    let li = len_in as f64;
    let lo = len_out as f64;
    match spec.coord {
        Coord::HalfPixel => (x + 0.5) / scale - 0.5,
        Coord::HalfPixelSymmetric => {
            let adj = lo / (scale * li);
            let center = li / 2.0;
            let offset = center * (1.0 - adj);
            offset + (x + 0.5) / scale - 0.5
        }
        Coord::PytorchHalfPixel => {
            if len_out > 1 {
                (x + 0.5) / scale - 0.5
            } else {
                0.0
            }
        }
        Coord::AlignCorners => {
            // the unrounded output length (`scale * len_in`) is used here
            let lr = li * scale;
            if len_out == 1 || lr == 1.0 {
                0.0
            } else {
                x * (li - 1.0) / (lr - 1.0)
            }
        }
        Coord::Asymmetric => x / scale,
        Coord::TfCropAndResize => {
            let (s, e) = roi;
            if len_out > 1 {
                s * (li - 1.0) + x * (e - s) * (li - 1.0) / (lo - 1.0)
            } else {
                0.5 * (s + e) * (li - 1.0)
            }
        }
    }
}

pub(super) fn cubic(a: f64, s: f64) -> f64 {
    let s = s.abs();
    if s <= 1.0 {
        ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0
    } else if s < 2.0 {
        ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a
    } else {
        0.0
    }
}

/// Taps of one output index: `None` means extrapolation.
type Taps = Option<Vec<(usize, f64)>>;

pub(super) fn axis_taps(
    spec: &Spec,
    len_in: usize,
    len_out: usize,
    scale: f64,
    roi: (f64, f64),
) -> Result<Vec<Taps>, KernelError> {
    let mut out = Vec::with_capacity(len_out);
    let last = len_in.saturating_sub(1) as f64;
    for o in 0..len_out {
        let x = to_input(spec, o as f64, len_in, len_out, scale, roi);
        if len_in == 0 || !x.is_finite() {
            out.push(None);
            continue;
        }
        if spec.coord == Coord::TfCropAndResize && (x < 0.0 || x > last) {
            out.push(None);
            continue;
        }
        match spec.mode {
            Mode::Nearest => {
                let f = x.floor();
                let frac = x - f;
                let i = match spec.nearest {
                    Nearest::Floor => f,
                    Nearest::Ceil => x.ceil(),
                    Nearest::RoundPreferFloor => {
                        if frac <= 0.5 {
                            f
                        } else {
                            f + 1.0
                        }
                    }
                    Nearest::RoundPreferCeil => {
                        if frac < 0.5 {
                            f
                        } else {
                            f + 1.0
                        }
                    }
                };
                out.push(Some(vec![(i.clamp(0.0, last) as usize, 1.0)]));
            }
            Mode::Linear | Mode::Cubic => {
                let radius = if spec.mode == Mode::Linear { 1.0 } else { 2.0 };
                let s = if spec.antialias && scale < 1.0 {
                    scale
                } else {
                    1.0
                };
                let f = x.floor();
                let ratio = x - f;
                let start = (-radius / s).floor();
                if start < -((1usize << 20) as f64) {
                    bail!("scale {scale} gives an antialiasing filter too wide to compute");
                }
                let start = start as i64 + 1;
                let end = 1 - start;
                let mut taps: Vec<(usize, f64)> = Vec::new();
                let mut sum = 0.0;
                for k in start..=end {
                    let d = (k as f64 - ratio) * s;
                    let w = if spec.mode == Mode::Linear {
                        (1.0 - d.abs()).max(0.0)
                    } else {
                        cubic(spec.cubic_a, d)
                    };
                    let idx = (f as i64).saturating_add(k);
                    let inside = idx >= 0 && (idx as f64) <= last;
                    if !inside && spec.exclude_outside {
                        continue;
                    }
                    let idx = idx.clamp(0, last as i64) as usize;
                    sum += w;
                    taps.push((idx, w));
                }
                if (spec.antialias || spec.exclude_outside) && sum != 0.0 {
                    for t in taps.iter_mut() {
                        t.1 /= sum;
                    }
                }
                out.push(Some(taps));
            }
        }
    }
    Ok(out)
}

/// The element types the separable resize computes in.
pub(super) trait Sample:
    Copy + Default + PartialEq + std::ops::AddAssign + std::ops::Mul<Output = Self>
{
    fn of(v: f64) -> Self;
}

impl Sample for f64 {
    fn of(v: f64) -> Self {
        v
    }
}

impl Sample for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
}

/// Resizes data of a shape one axis at a time, in `T` (float32 data stays
/// float32: through f64, SLANet's three Resizes took 8 ms). A tap of
/// weight 1 alone (nearest, or linear on a sample point) is a copy.
pub(super) fn resize_separable<T: Sample>(
    spec: &Spec,
    data: Vec<T>,
    in_shape: &[usize],
    out_shape: &[usize],
    scales: &[f64],
    roi: &[(f64, f64)],
) -> Result<Vec<T>, KernelError> {
    let r = in_shape.len();
    crate::tensor::budget::check(out_shape, 8)?;
    let mut cur = data;
    let mut shape = in_shape.to_vec();
    let mut extrap: Vec<Vec<bool>> = vec![vec![]; r];
    for ax in 0..r {
        let taps = if in_shape[ax] == out_shape[ax]
            && scales[ax] == 1.0
            && spec.coord != Coord::TfCropAndResize
        {
            continue;
        } else {
            axis_taps(spec, in_shape[ax], out_shape[ax], scales[ax], roi[ax])?
        };
        extrap[ax] = taps.iter().map(|t| t.is_none()).collect();
        let taps: Vec<Option<Vec<(usize, T)>>> = taps
            .into_iter()
            .map(|t| t.map(|t| t.into_iter().map(|(i, w)| (i, T::of(w))).collect()))
            .collect();
        let outer: usize = shape[..ax].iter().product();
        let inner: usize = shape[ax + 1..].iter().product();
        let n_in = shape[ax];
        let n_out = out_shape[ax];
        let mut next = vec![T::default(); outer * n_out * inner];
        let one = T::of(1.0);
        if next.is_empty() || cur.is_empty() {
            cur = next;
            shape[ax] = n_out;
            continue;
        }
        // the last axis with the same number of taps everywhere: one tight
        // loop over a flat table (per-output tap slices cost more than the
        // arithmetic there)
        let k = taps.first().and_then(|t| t.as_ref()).map_or(0, |t| t.len());
        if inner == 1
            && k > 0
            && taps
                .iter()
                .all(|t| t.as_ref().is_some_and(|t| t.len() == k))
        {
            let flat: Vec<(usize, T)> = taps.iter().flatten().flatten().copied().collect();
            let nearest = k == 1 && flat.iter().all(|&(_, w)| w == one);
            for (src, dst) in cur.chunks_exact(n_in).zip(next.chunks_exact_mut(n_out)) {
                if nearest {
                    for (d, &(i, _)) in dst.iter_mut().zip(&flat) {
                        *d = src[i];
                    }
                } else {
                    for (d, t) in dst.iter_mut().zip(flat.chunks_exact(k)) {
                        let mut acc = T::default();
                        for &(i, w) in t {
                            acc += w * src[i];
                        }
                        *d = acc;
                    }
                }
            }
            cur = next;
            shape[ax] = n_out;
            continue;
        }
        for (src_block, dst_block) in cur
            .chunks_exact(n_in * inner)
            .zip(next.chunks_exact_mut(n_out * inner))
        {
            for (t, dst) in taps.iter().zip(dst_block.chunks_exact_mut(inner)) {
                let Some(t) = t else { continue };
                let row = |i: usize| &src_block[i * inner..(i + 1) * inner];
                match t.as_slice() {
                    [(i, w)] if *w == one => dst.copy_from_slice(row(*i)),
                    _ => {
                        for &(i, w) in t {
                            for (d, &v) in dst.iter_mut().zip(row(i)) {
                                *d += w * v;
                            }
                        }
                    }
                }
            }
        }
        cur = next;
        shape[ax] = n_out;
    }
    if extrap.iter().any(|e| e.iter().any(|&b| b)) {
        // overwrite every element with an extrapolated coordinate
        let fill = T::of(spec.extrapolation);
        let mut idx = vec![0usize; r];
        for v in cur.iter_mut() {
            if idx
                .iter()
                .enumerate()
                .any(|(a, &i)| extrap[a].get(i).copied().unwrap_or(false))
            {
                *v = fill;
            }
            for a in (0..r).rev() {
                idx[a] += 1;
                if idx[a] < out_shape[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
    }
    Ok(cur)
}

pub(super) fn from_f64(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    use crate::ops::kernels::numeric::Num;
    fn conv<T: Num>(shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
        let round = !T::IS_FLOAT;
        Ok(Tensor::from_vec(
            shape,
            v.into_iter()
                .map(|x| T::from_f64(if round { x.round() } else { x }))
                .collect(),
        )?)
    }
    Ok(match dt {
        DataType::Float => conv::<f32>(shape, v)?,
        DataType::Double => conv::<f64>(shape, v)?,
        DataType::Float16 => conv::<f16>(shape, v)?,
        DataType::Bfloat16 => conv::<bf16>(shape, v)?,
        DataType::Int8 => conv::<i8>(shape, v)?,
        DataType::Int16 => conv::<i16>(shape, v)?,
        DataType::Int32 => conv::<i32>(shape, v)?,
        DataType::Int64 => conv::<i64>(shape, v)?,
        DataType::Uint8 => conv::<u8>(shape, v)?,
        DataType::Uint16 => conv::<u16>(shape, v)?,
        DataType::Uint32 => conv::<u32>(shape, v)?,
        DataType::Uint64 => conv::<u64>(shape, v)?,
        other => bail!("Resize does not support {other}"),
    })
}

pub(super) fn run(
    spec: &Spec,
    x: &Tensor,
    roi: Option<&Tensor>,
    scales: Option<Vec<f64>>,
    sizes: Option<Vec<i64>>,
) -> Result<Tensor, KernelError> {
    let in_shape = x.shape().to_vec();
    let r = in_shape.len();
    if matches!(x, Tensor::Str(_) | Tensor::Bool(_) | Tensor::Small { .. }) {
        bail!("Resize does not support {}", x.dtype());
    }
    let (out_shape, sc) = out_geometry(spec, &in_shape, scales.as_deref(), sizes.as_deref())?;
    let mut rois = vec![(0.0, 1.0); r];
    if spec.coord == Coord::TfCropAndResize {
        if let Some(t) = roi.filter(|t| !t.is_empty()) {
            let v = t
                .to_f64_vec()
                .ok_or_else(|| KernelError::new("roi must be numeric"))?;
            let axes: Vec<usize> = match &spec.axes {
                Some(a) => a
                    .iter()
                    .map(|&a| crate::ops::kernels::norm_axis(a, r))
                    .collect::<Result<_, _>>()?,
                None => (0..r).collect(),
            };
            if v.len() != 2 * axes.len() {
                bail!("roi has {} values, expected {}", v.len(), 2 * axes.len());
            }
            for (k, &a) in axes.iter().enumerate() {
                rois[a] = (v[k], v[axes.len() + k]);
            }
        }
    }
    if let Tensor::F32(a) = x {
        let data = crate::tensor::mapped(a, |&v| v);
        let out = resize_separable::<f32>(spec, data, &in_shape, &out_shape, &sc, &rois)?;
        return Ok(Tensor::from_vec(&out_shape, out)?);
    }
    let data = x
        .to_f64_vec()
        .ok_or_else(|| KernelError::new("Resize input must be numeric"))?;
    let out = resize_separable::<f64>(spec, data, &in_shape, &out_shape, &sc, &rois)?;
    from_f64(x.dtype(), &out_shape, out)
}

pub(super) fn float_list(t: Option<&Tensor>) -> Result<Option<Vec<f64>>, KernelError> {
    match t {
        Some(t) if !t.is_empty() => {
            Ok(Some(t.to_f64_vec().ok_or_else(|| {
                KernelError::new("scales must be numeric")
            })?))
        }
        _ => Ok(None),
    }
}

pub(super) fn resize_shape(
    cx: &mut InferCtx,
    scales: Option<Vec<f64>>,
    sizes: Option<Vec<Expr>>,
    sizes_given: bool,
) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let Some(shape) = cx.shape(0).map(|s| s.to_vec()) else {
        cx.set_tensor(0, elem, None);
        return Ok(());
    };
    let r = shape.len();
    let axes: Vec<usize> = match cx.attrs.ints("axes") {
        Some(a) => a
            .iter()
            .map(|&x| crate::ops::shape_rules::norm_axis(x, r))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    let mut out = shape.clone();
    if let Some(s) = scales.filter(|s| !s.is_empty()) {
        if s.len() != axes.len() {
            return Err(ShapeError::new(format!(
                "scales has {} values, {} axes are resized",
                s.len(),
                axes.len()
            )));
        }
        for (&a, &v) in axes.iter().zip(&s) {
            if v.is_nan() || v <= 0.0 {
                return Err(ShapeError::new(format!("scale {v} must be positive")));
            }
            out[a] = match &shape[a] {
                Some(d) => match d.as_int() {
                    Some(n) => Some(Expr::int((n as f64 * v).floor() as i64)),
                    None if v.fract() == 0.0 => Some(d.mul(&Expr::int(v as i64))),
                    None => Some(cx.fresh()),
                },
                None => None,
            };
        }
    } else if let Some(z) = sizes.filter(|z| !z.is_empty()) {
        if z.len() != axes.len() {
            return Err(ShapeError::new(format!(
                "sizes has {} values, {} axes are resized",
                z.len(),
                axes.len()
            )));
        }
        let policy = cx.attrs.string_or("keep_aspect_ratio_policy", "stretch");
        let z_ints: Option<Vec<i64>> = z.iter().map(|e| e.as_int()).collect();
        if policy == "stretch" {
            // sizes may be symbolic: computed from other shapes
            for (&a, v) in axes.iter().zip(&z) {
                out[a] = Some(v.clone());
            }
        } else {
            let ins: Option<Vec<i64>> = axes
                .iter()
                .map(|&a| shape[a].as_ref().and_then(|e| e.as_int()))
                .collect();
            match ins.zip(z_ints) {
                Some((ins, z)) => {
                    let ratios = ins
                        .iter()
                        .zip(&z)
                        .map(|(&i, &v)| v as f64 / i.max(1) as f64);
                    let s = if policy == "not_larger" {
                        ratios.fold(f64::INFINITY, f64::min)
                    } else {
                        ratios.fold(0.0, f64::max)
                    };
                    for (&a, &i) in axes.iter().zip(&ins) {
                        out[a] = Some(Expr::int((s * i as f64 + 0.5).floor() as i64));
                    }
                }
                None => {
                    for &a in &axes {
                        out[a] = Some(cx.fresh());
                    }
                }
            }
        }
    } else if sizes_given {
        // sizes given but unknown: the rank stays, the resized dims are data-dependent
        let n = cx
            .shape(3)
            .and_then(|s| s.first().cloned().flatten())
            .and_then(|e| e.as_int());
        for &a in &axes {
            out[a] = if n.is_some() { Some(cx.fresh()) } else { None };
        }
    } else {
        for &a in &axes {
            out[a] = None;
        }
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

pub(super) fn const_floats(cx: &InferCtx, i: usize) -> Option<Vec<f64>> {
    cx.ints(i)
        .map(|v| v.into_iter().map(|x| x as f64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mode: Mode, coord: Coord) -> Spec {
        Spec {
            mode,
            coord,
            nearest: Nearest::RoundPreferFloor,
            cubic_a: -0.75,
            exclude_outside: false,
            extrapolation: 0.0,
            antialias: false,
            axes: None,
            policy: Policy::Stretch,
        }
    }

    #[test]
    fn linear_align_corners() {
        let s = spec(Mode::Linear, Coord::AlignCorners);
        let out =
            resize_separable::<f64>(&s, vec![0.0, 3.0], &[2], &[4], &[2.0], &[(0.0, 1.0)]).unwrap();
        let want = [0.0, 1.0, 2.0, 3.0];
        assert!(
            out.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9),
            "{out:?}"
        );
    }

    #[test]
    fn nearest_upsample() {
        let s = spec(Mode::Nearest, Coord::Asymmetric);
        let out =
            resize_separable::<f64>(&s, vec![1.0, 2.0], &[2], &[4], &[2.0], &[(0.0, 1.0)]).unwrap();
        assert_eq!(out, vec![1.0, 1.0, 2.0, 2.0]);
    }

    /// Resize of the last two axes by the taps' outer product, directly.
    fn reference(
        s: &Spec,
        x: &[f64],
        (c, h, w): (usize, usize, usize),
        (oh, ow): (usize, usize),
        sc: [f64; 2],
    ) -> Vec<f64> {
        let ty = axis_taps(s, h, oh, sc[0], (0.0, 1.0)).unwrap();
        let tx = axis_taps(s, w, ow, sc[1], (0.0, 1.0)).unwrap();
        let mut out = Vec::new();
        for p in 0..c {
            for ry in &ty {
                for rx in &tx {
                    out.push(match (ry, rx) {
                        (Some(ry), Some(rx)) => ry
                            .iter()
                            .flat_map(|&(i, wi)| {
                                rx.iter()
                                    .map(move |&(j, wj)| wi * wj * x[(p * h + i) * w + j])
                            })
                            .sum(),
                        _ => s.extrapolation,
                    });
                }
            }
        }
        out
    }

    #[test]
    fn separable_resize_agrees_with_the_direct_sum_in_f32_and_f64() {
        let (c, h, w) = (3, 5, 7);
        let x: Vec<f64> = (0..c * h * w)
            .map(|i| ((i * 29 % 17) as f64) - 8.0)
            .collect();
        let mut cubic_excl = spec(Mode::Cubic, Coord::HalfPixel);
        cubic_excl.exclude_outside = true;
        let mut crop = spec(Mode::Linear, Coord::TfCropAndResize);
        crop.extrapolation = 7.0;
        let cases = [
            (spec(Mode::Nearest, Coord::Asymmetric), (10, 14), [2.0, 2.0]),
            (spec(Mode::Linear, Coord::HalfPixel), (3, 4), [0.6, 0.6]),
            (spec(Mode::Linear, Coord::AlignCorners), (9, 13), [1.8, 1.9]),
            (cubic_excl, (8, 11), [1.6, 1.6]),
            (crop, (6, 9), [1.2, 1.3]),
        ];
        for (s, (oh, ow), sc) in cases {
            let want = reference(&s, &x, (c, h, w), (oh, ow), sc);
            let args = (&[c, h, w][..], &[c, oh, ow][..], &[1.0, sc[0], sc[1]][..]);
            let roi = [(0.0, 1.0), (0.0, 1.0), (0.0, 1.0)];
            let f64s =
                resize_separable::<f64>(&s, x.clone(), args.0, args.1, args.2, &roi).unwrap();
            let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let f32s = resize_separable::<f32>(&s, xf, args.0, args.1, args.2, &roi).unwrap();
            assert_eq!(f64s.len(), want.len());
            for ((a, b), r) in f64s.iter().zip(&f32s).zip(&want) {
                assert!((a - r).abs() < 1e-9, "{:?}: f64 {a} vs {r}", s.mode);
                assert!((*b as f64 - r).abs() < 1e-4, "{:?}: f32 {b} vs {r}", s.mode);
            }
        }
    }

    #[test]
    fn cubic_weights_sum_to_one() {
        for t in [0.0, 0.25, 0.5, 0.9] {
            let s: f64 = (-1..=2).map(|k| cubic(-0.75, k as f64 - t)).sum();
            assert!((s - 1.0).abs() < 1e-12);
        }
    }
}
