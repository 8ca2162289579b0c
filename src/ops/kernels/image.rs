//! Image kernels: Resize (nearest / linear / cubic, every coordinate
//! transformation, antialias, axes, keep_aspect_ratio_policy) and the old
//! Upsample. Interpolation is separable: each resized axis gets, per output
//! index, a list of (input index, weight) taps, applied one axis at a time
//! in f64.

use crate::bail;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Tensor, Value};
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

fn spec_of(info: &NodeInfo, upsample: bool) -> Result<Spec, KernelError> {
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
                let n = super::norm_axis(a, r)?;
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
fn to_input(
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

fn cubic(a: f64, s: f64) -> f64 {
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

fn axis_taps(
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

/// Resizes f64 data of a shape.
pub fn resize_f64(
    spec: &Spec,
    data: Vec<f64>,
    in_shape: &[usize],
    out_shape: &[usize],
    scales: &[f64],
    roi: &[(f64, f64)],
) -> Result<Vec<f64>, KernelError> {
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
        let outer: usize = shape[..ax].iter().product();
        let inner: usize = shape[ax + 1..].iter().product();
        let n_in = shape[ax];
        let n_out = out_shape[ax];
        let mut next = vec![0.0; outer * n_out * inner];
        for o in 0..outer {
            for (j, t) in taps.iter().enumerate() {
                let Some(t) = t else { continue };
                let dst = (o * n_out + j) * inner;
                for &(i, w) in t {
                    let src = (o * n_in + i) * inner;
                    for k in 0..inner {
                        next[dst + k] += w * cur[src + k];
                    }
                }
            }
        }
        cur = next;
        shape[ax] = n_out;
    }
    if extrap.iter().any(|e| e.iter().any(|&b| b)) {
        // overwrite every element with an extrapolated coordinate
        let mut idx = vec![0usize; r];
        for v in cur.iter_mut() {
            if idx
                .iter()
                .enumerate()
                .any(|(a, &i)| extrap[a].get(i).copied().unwrap_or(false))
            {
                *v = spec.extrapolation;
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

fn from_f64(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    use crate::ops::kernels::elementwise::Num;
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

fn run(
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
                    .map(|&a| super::norm_axis(a, r))
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
    let data = x
        .to_f64_vec()
        .ok_or_else(|| KernelError::new("Resize input must be numeric"))?;
    let out = resize_f64(spec, data, &in_shape, &out_shape, &sc, &rois)?;
    from_f64(x.dtype(), &out_shape, out)
}

fn float_list(t: Option<&Tensor>) -> Result<Option<Vec<f64>>, KernelError> {
    match t {
        Some(t) if !t.is_empty() => {
            Ok(Some(t.to_f64_vec().ok_or_else(|| {
                KernelError::new("scales must be numeric")
            })?))
        }
        _ => Ok(None),
    }
}

pub fn resize(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let spec = spec_of(info, false)?;
    let opset = info.opset;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let out = if opset < 11 {
            run(&spec, x, None, float_list(Some(tensor_in(ins, 1)?))?, None)?
        } else {
            let roi = opt_tensor_in(ins, 1)?;
            let scales = float_list(opt_tensor_in(ins, 2)?)?;
            let sizes = match opt_tensor_in(ins, 3)? {
                Some(t) if !t.is_empty() => Some(t.to_i64_vec()?),
                _ => None,
            };
            if scales.is_some() && sizes.is_some() {
                bail!("only one of scales and sizes may be given");
            }
            run(&spec, x, roi, scales, sizes)?
        };
        Ok(vec![Value::Tensor(out)])
    }))
}

pub fn upsample(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let spec = spec_of(info, true)?;
    let attr_scales = if info.opset < 9 {
        info.attrs
            .floats("scales")
            .map(|v| v.into_iter().map(|x| x as f64).collect::<Vec<_>>())
    } else {
        None
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let scales = match &attr_scales {
            Some(s) => Some(s.clone()),
            None => float_list(Some(tensor_in(ins, 1)?))?,
        };
        Ok(vec![Value::Tensor(run(&spec, x, None, scales, None)?)])
    }))
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
        let out = resize_f64(&s, vec![0.0, 3.0], &[2], &[4], &[2.0], &[(0.0, 1.0)]).unwrap();
        let want = [0.0, 1.0, 2.0, 3.0];
        assert!(
            out.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9),
            "{out:?}"
        );
    }

    #[test]
    fn nearest_upsample() {
        let s = spec(Mode::Nearest, Coord::Asymmetric);
        let out = resize_f64(&s, vec![1.0, 2.0], &[2], &[4], &[2.0], &[(0.0, 1.0)]).unwrap();
        assert_eq!(out, vec![1.0, 1.0, 2.0, 2.0]);
    }

    #[test]
    fn cubic_weights_sum_to_one() {
        for t in [0.0, 0.25, 0.5, 0.9] {
            let s: f64 = (-1..=2).map(|k| cubic(-0.75, k as f64 - t)).sum();
            assert!((s - 1.0).abs() < 1e-12);
        }
    }
}

// ---------------------------------------------------------------------------
// NonMaxSuppression

fn iou(a: [f64; 4], b: [f64; 4], center: bool) -> f64 {
    // to (y1, x1, y2, x2) with y1 <= y2, x1 <= x2
    let norm = |v: [f64; 4]| -> [f64; 4] {
        if center {
            let (xc, yc, w, h) = (v[0], v[1], v[2], v[3]);
            [yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]
        } else {
            [
                v[0].min(v[2]),
                v[1].min(v[3]),
                v[0].max(v[2]),
                v[1].max(v[3]),
            ]
        }
    };
    let (a, b) = (norm(a), norm(b));
    let ih = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let iw = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = ih * iw;
    let area = |v: [f64; 4]| (v[2] - v[0]) * (v[3] - v[1]);
    let union = area(a) + area(b) - inter;
    if union <= 0.0 {
        0.0
    } else {
        inter / union
    }
}

pub fn non_max_suppression(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let center = info.attrs.int_or("center_point_box", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let boxes = tensor_in(ins, 0)?;
        let scores = tensor_in(ins, 1)?;
        if boxes.rank() != 3 || boxes.shape()[2] != 4 {
            bail!("boxes must be [batches, boxes, 4], got {:?}", boxes.shape());
        }
        let (nb, ns) = (boxes.shape()[0], boxes.shape()[1]);
        if scores.rank() != 3 || scores.shape()[0] != nb || scores.shape()[2] != ns {
            bail!(
                "scores must be [{nb}, classes, {ns}], got {:?}",
                scores.shape()
            );
        }
        let nc = scores.shape()[1];
        let scalar = |i: usize| -> Result<Option<f64>, KernelError> {
            match opt_tensor_in(ins, i)? {
                Some(t) if !t.is_empty() => Ok(t.to_f64_vec().and_then(|v| v.first().copied())),
                _ => Ok(None),
            }
        };
        let max_out = match opt_tensor_in(ins, 2)? {
            Some(t) if !t.is_empty() => t.to_i64_vec()?.first().copied().unwrap_or(0),
            _ => 0,
        };
        let iou_th = scalar(3)?.unwrap_or(0.0);
        let score_th = scalar(4)?;
        let bv = boxes
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("boxes must be numeric"))?;
        let sv = scores
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("scores must be numeric"))?;
        let mut out: Vec<i64> = vec![];
        if max_out > 0 {
            for b in 0..nb {
                for c in 0..nc {
                    let sc = &sv[(b * nc + c) * ns..(b * nc + c + 1) * ns];
                    let mut cand: Vec<usize> = (0..ns)
                        .filter(|&i| score_th.is_none_or(|t| sc[i] > t))
                        .collect();
                    cand.sort_by(|&i, &j| {
                        sc[j]
                            .partial_cmp(&sc[i])
                            .unwrap_or(std::cmp::Ordering::Equal)
                    });
                    let bx = |i: usize| -> [f64; 4] {
                        let o = (b * ns + i) * 4;
                        [bv[o], bv[o + 1], bv[o + 2], bv[o + 3]]
                    };
                    let mut kept: Vec<usize> = vec![];
                    for i in cand {
                        if kept.len() as i64 >= max_out {
                            break;
                        }
                        if kept.iter().all(|&k| iou(bx(k), bx(i), center) <= iou_th) {
                            kept.push(i);
                        }
                    }
                    for k in kept {
                        out.extend([b as i64, c as i64, k as i64]);
                    }
                }
            }
        }
        let n = out.len() / 3;
        Ok(vec![Value::Tensor(Tensor::from_vec(&[n, 3], out)?)])
    }))
}

// ---------------------------------------------------------------------------
// RoiAlign

pub fn roi_align(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let half_pixel = info.opset >= 16
        && info
            .attrs
            .string_or("coordinate_transformation_mode", "half_pixel")
            == "half_pixel";
    let max_mode = match info.attrs.string_or("mode", "avg").as_str() {
        "avg" => false,
        "max" => true,
        other => bail!("unknown mode '{other}'"),
    };
    let oh = info.attrs.int_or("output_height", 1);
    let ow = info.attrs.int_or("output_width", 1);
    if oh <= 0 || ow <= 0 || oh > 1 << 20 || ow > 1 << 20 {
        bail!("output size {oh}x{ow} is invalid");
    }
    let (oh, ow) = (oh as usize, ow as usize);
    let sampling = info.attrs.int_or("sampling_ratio", 0).max(0) as usize;
    let scale = info.attrs.float_or("spatial_scale", 1.0) as f64;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let rois = tensor_in(ins, 1)?;
        let bi = tensor_in(ins, 2)?.to_i64_vec()?;
        if x.rank() != 4 {
            bail!("X must be [N, C, H, W], got {:?}", x.shape());
        }
        let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
        if rois.rank() != 2 || rois.shape()[1] != 4 {
            bail!("rois must be [num_rois, 4], got {:?}", rois.shape());
        }
        let nr = rois.shape()[0];
        if bi.len() != nr {
            bail!("batch_indices has {} entries, {nr} rois", bi.len());
        }
        let xv = x
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("X must be numeric"))?;
        let rv = rois
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("rois must be numeric"))?;
        let off = if half_pixel { 0.5 } else { 0.0 };
        let total = crate::tensor::budget::check(&[nr, c, oh, ow], 8)?;
        let mut out = vec![0.0; total];
        for r in 0..nr {
            let b = bi[r];
            if b < 0 || b as usize >= n {
                bail!("batch index {b} is out of range for {n} images");
            }
            let b = b as usize;
            let x1 = rv[r * 4] * scale - off;
            let y1 = rv[r * 4 + 1] * scale - off;
            let x2 = rv[r * 4 + 2] * scale - off;
            let y2 = rv[r * 4 + 3] * scale - off;
            let (mut rw, mut rh) = (x2 - x1, y2 - y1);
            if !half_pixel {
                rw = rw.max(1.0);
                rh = rh.max(1.0);
            }
            let bh = rh / oh as f64;
            let bw = rw / ow as f64;
            let gh = if sampling > 0 {
                sampling
            } else {
                (rh / oh as f64).ceil().max(1.0) as usize
            };
            let gw = if sampling > 0 {
                sampling
            } else {
                (rw / ow as f64).ceil().max(1.0) as usize
            };
            if gh.saturating_mul(gw) > 1 << 20 {
                bail!("roi {r} needs a {gh}x{gw} sampling grid per bin: too large");
            }
            let count = (gh * gw) as f64;
            for ch in 0..c {
                let img = &xv[(b * c + ch) * h * w..(b * c + ch + 1) * h * w];
                for ph in 0..oh {
                    for pw in 0..ow {
                        let mut acc = if max_mode { f64::NEG_INFINITY } else { 0.0 };
                        for iy in 0..gh {
                            let y = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gh as f64;
                            for ix in 0..gw {
                                let xx = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gw as f64;
                                let taps = bilinear_taps(y, xx, h, w);
                                if max_mode {
                                    let m = taps
                                        .iter()
                                        .map(|&(i, wt)| wt * img[i])
                                        .fold(f64::NEG_INFINITY, f64::max);
                                    let m = if taps.is_empty() { 0.0 } else { m };
                                    acc = acc.max(m);
                                } else {
                                    acc += taps.iter().map(|&(i, wt)| wt * img[i]).sum::<f64>();
                                }
                            }
                        }
                        out[((r * c + ch) * oh + ph) * ow + pw] =
                            if max_mode { acc } else { acc / count };
                    }
                }
            }
        }
        Ok(vec![Value::Tensor(from_f64(
            x.dtype(),
            &[nr, c, oh, ow],
            out,
        )?)])
    }))
}

/// The four (flat index, weight) taps of a bilinear sample; none outside.
fn bilinear_taps(y: f64, x: f64, h: usize, w: usize) -> Vec<(usize, f64)> {
    if h == 0 || w == 0 || y < -1.0 || y > h as f64 || x < -1.0 || x > w as f64 {
        return vec![];
    }
    let (mut y, mut x) = (y.max(0.0), x.max(0.0));
    let mut yl = y.floor() as usize;
    let mut xl = x.floor() as usize;
    let yh;
    let xh;
    if yl >= h - 1 {
        yl = h - 1;
        yh = h - 1;
        y = yl as f64;
    } else {
        yh = yl + 1;
    }
    if xl >= w - 1 {
        xl = w - 1;
        xh = w - 1;
        x = xl as f64;
    } else {
        xh = xl + 1;
    }
    let (ly, lx) = (y - yl as f64, x - xl as f64);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    vec![
        (yl * w + xl, hy * hx),
        (yl * w + xh, hy * lx),
        (yh * w + xl, ly * hx),
        (yh * w + xh, ly * lx),
    ]
}

// ---------------------------------------------------------------------------
// GridSample

#[derive(Clone, Copy, PartialEq)]
enum Pad {
    Zeros,
    Border,
    Reflection,
}

fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let rng = hi - lo;
    if rng <= 0.0 {
        return lo;
    }
    if x < lo {
        let dx = lo - x;
        let n = (dx / rng).floor();
        let r = dx - n * rng;
        if n as i64 % 2 == 0 {
            lo + r
        } else {
            hi - r
        }
    } else if x > hi {
        let dx = x - hi;
        let n = (dx / rng).floor();
        let r = dx - n * rng;
        if n as i64 % 2 == 0 {
            hi - r
        } else {
            lo + r
        }
    } else {
        x
    }
}

pub fn grid_sample(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let align = info.attrs.int_or("align_corners", 0) != 0;
    let default_mode = if info.opset >= 20 {
        "linear"
    } else {
        "bilinear"
    };
    let mode = parse_mode(&info.attrs.string_or("mode", default_mode))?;
    let pad = match info.attrs.string_or("padding_mode", "zeros").as_str() {
        "zeros" => Pad::Zeros,
        "border" => Pad::Border,
        "reflection" => Pad::Reflection,
        other => bail!("unknown padding_mode '{other}'"),
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let grid = tensor_in(ins, 1)?;
        let r = x.rank();
        if r < 3 {
            bail!("X must be [N, C, spatial...], got {:?}", x.shape());
        }
        let sr = r - 2;
        let (n, c) = (x.shape()[0], x.shape()[1]);
        let sp: Vec<usize> = x.shape()[2..].to_vec();
        if grid.rank() != r || grid.shape()[0] != n || grid.shape()[r - 1] != sr {
            bail!(
                "grid must be [{n}, out spatial..., {sr}], got {:?}",
                grid.shape()
            );
        }
        let osp: Vec<usize> = grid.shape()[1..r - 1].to_vec();
        let on: usize = osp.iter().product();
        let inn: usize = sp.iter().product();
        let xv = x
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("X must be numeric"))?;
        let gv = grid
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("grid must be numeric"))?;
        let mut out = vec![0.0; n * c * on];
        // strides of the input's spatial dims
        let mut strides = vec![1usize; sr];
        for d in (0..sr.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * sp[d + 1];
        }
        for b in 0..n {
            for o in 0..on {
                let g = &gv[(b * on + o) * sr..(b * on + o + 1) * sr];
                // per spatial dim: list of (index or None for zero, weight)
                let mut per_dim: Vec<Vec<(Option<usize>, f64)>> = Vec::with_capacity(sr);
                for d in 0..sr {
                    let len = sp[d];
                    let lf = len as f64;
                    let gc = g[sr - 1 - d];
                    let mut coord = if align {
                        (gc + 1.0) / 2.0 * (lf - 1.0)
                    } else {
                        ((gc + 1.0) * lf - 1.0) / 2.0
                    };
                    let (lo, hi) = if align {
                        (0.0, lf - 1.0)
                    } else {
                        (-0.5, lf - 0.5)
                    };
                    match pad {
                        Pad::Border => coord = coord.clamp(0.0, (lf - 1.0).max(0.0)),
                        Pad::Reflection => coord = reflect(coord, lo, hi),
                        Pad::Zeros => {}
                    }
                    let fetch = |i: i64| -> Option<usize> {
                        if len == 0 {
                            return None;
                        }
                        match pad {
                            Pad::Zeros => (i >= 0 && (i as usize) < len).then_some(i as usize),
                            Pad::Border => Some(i.clamp(0, len as i64 - 1) as usize),
                            Pad::Reflection => {
                                let v = reflect(i as f64, lo, hi).round() as i64;
                                Some(v.clamp(0, len as i64 - 1) as usize)
                            }
                        }
                    };
                    let taps: Vec<(Option<usize>, f64)> = if !coord.is_finite() {
                        vec![(None, 0.0)]
                    } else {
                        match mode {
                            Mode::Nearest => {
                                vec![(fetch(coord.round_ties_even() as i64), 1.0)]
                            }
                            Mode::Linear => {
                                let f = coord.floor();
                                let t = coord - f;
                                let f = f as i64;
                                vec![(fetch(f), 1.0 - t), (fetch(f.saturating_add(1)), t)]
                            }
                            Mode::Cubic => {
                                let f = coord.floor();
                                let t = coord - f;
                                let f = f as i64;
                                (-1..=2)
                                    .map(|k| {
                                        (fetch(f.saturating_add(k)), cubic(-0.75, k as f64 - t))
                                    })
                                    .collect()
                            }
                        }
                    };
                    per_dim.push(taps);
                }
                for ch in 0..c {
                    let img = &xv[(b * c + ch) * inn..(b * c + ch + 1) * inn];
                    let mut acc = 0.0;
                    let mut idx = vec![0usize; sr];
                    'outer: loop {
                        let mut w = 1.0;
                        let mut flat = Some(0usize);
                        for d in 0..sr {
                            let (i, wt) = per_dim[d][idx[d]];
                            w *= wt;
                            flat = match (flat, i) {
                                (Some(f), Some(i)) => Some(f + i * strides[d]),
                                _ => None,
                            };
                        }
                        if let Some(f) = flat {
                            acc += w * img[f];
                        }
                        for d in (0..sr).rev() {
                            idx[d] += 1;
                            if idx[d] < per_dim[d].len() {
                                continue 'outer;
                            }
                            idx[d] = 0;
                        }
                        break;
                    }
                    out[(b * c + ch) * on + o] = acc;
                }
            }
        }
        let mut oshape = vec![n, c];
        oshape.extend(osp);
        Ok(vec![Value::Tensor(from_f64(x.dtype(), &oshape, out)?)])
    }))
}

// ---------------------------------------------------------------------------
// AffineGrid

/// Normalised coordinates of `len` points along one axis.
fn grid_line(len: usize, align: bool) -> Vec<f64> {
    (0..len)
        .map(|i| {
            let (i, l) = (i as f64, len as f64);
            if align {
                if len == 1 {
                    -1.0
                } else {
                    -1.0 + 2.0 * i / (l - 1.0)
                }
            } else {
                -1.0 + (2.0 * i + 1.0) / l
            }
        })
        .collect()
}

pub fn affine_grid(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let align = info.attrs.int_or("align_corners", 0) != 0;
    Ok(Box::new(move |_, ins| {
        let theta = tensor_in(ins, 0)?;
        let size = tensor_in(ins, 1)?.to_i64_vec()?;
        if size.iter().any(|&d| d < 0) {
            bail!("size {size:?} has a negative dimension");
        }
        let sr = match size.len() {
            4 => 2,
            5 => 3,
            n => bail!("size must have 4 or 5 elements, got {n}"),
        };
        let n = size[0] as usize;
        if theta.shape() != [n, sr, sr + 1] {
            bail!(
                "theta must be [{n}, {sr}, {}], got {:?}",
                sr + 1,
                theta.shape()
            );
        }
        let sp: Vec<usize> = size[2..].iter().map(|&d| d as usize).collect();
        let total = sp
            .iter()
            .try_fold(n.saturating_mul(sr), |a, &b| a.checked_mul(b))
            .filter(|&t| t <= 1 << 31)
            .ok_or_else(|| KernelError::new("grid is too large"))?;
        let tv = theta
            .to_f64_vec()
            .ok_or_else(|| KernelError::new("theta must be numeric"))?;
        // lines per spatial dim, in (D,) H, W order
        let lines: Vec<Vec<f64>> = sp.iter().map(|&l| grid_line(l, align)).collect();
        let on: usize = sp.iter().product();
        let mut out = Vec::with_capacity(total);
        for b in 0..n {
            let t = &tv[b * sr * (sr + 1)..(b + 1) * sr * (sr + 1)];
            let mut idx = vec![0usize; sr];
            for _ in 0..on {
                // point (x, y[, z]) with x along the last spatial dim
                let mut p: Vec<f64> = (0..sr)
                    .map(|k| lines[sr - 1 - k][idx[sr - 1 - k]])
                    .collect();
                p.push(1.0);
                for row in 0..sr {
                    let r = &t[row * (sr + 1)..(row + 1) * (sr + 1)];
                    out.push(r.iter().zip(&p).map(|(a, b)| a * b).sum());
                }
                for d in (0..sr).rev() {
                    idx[d] += 1;
                    if idx[d] < sp[d] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
        }
        let mut shape = vec![n];
        shape.extend(&sp);
        shape.push(sr);
        Ok(vec![Value::Tensor(from_f64(theta.dtype(), &shape, out)?)])
    }))
}
