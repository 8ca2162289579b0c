//! Remaining default-domain operators: CumProd, BitCast, CenterCropPad,
//! Shrink, Det, DynamicQuantizeLinear, MaxUnpool, AffineGrid, Col2Im, the
//! preview training optimisers. Also the
//! f64 helpers the loss / signal kernels share.

use super::elementwise::Num;
use super::manip::{for_each_index, ints_in, strides};
use super::{norm_axis, typed};
use crate::bail;
use crate::dispatch_num;
use crate::runtime::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::tensor::{DataType, Elem, Tensor, Value};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

/// A numeric tensor's elements as f64 (row-major).
pub fn f64_of(t: &Tensor, what: &str) -> Result<Vec<f64>, KernelError> {
    match t.to_f64_vec() {
        Some(v) => Ok(v),
        None => bail!("{what} must be numeric, got {}", t.dtype()),
    }
}

/// A float tensor of type `dtype` from f64 values.
pub fn float_of(dtype: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    let n: usize = shape.iter().product();
    if n != v.len() {
        bail!("{} values do not fill shape {shape:?}", v.len());
    }
    let sh = IxDyn(shape);
    Ok(match dtype {
        DataType::Float => Tensor::F32(ArrayD::from_shape_vec(
            sh,
            v.iter().map(|&x| x as f32).collect(),
        )?),
        DataType::Double => Tensor::F64(ArrayD::from_shape_vec(sh, v)?),
        DataType::Float16 => Tensor::F16(ArrayD::from_shape_vec(
            sh,
            v.iter().map(|&x| f16::from_f64(x)).collect(),
        )?),
        DataType::Bfloat16 => Tensor::BF16(ArrayD::from_shape_vec(
            sh,
            v.iter().map(|&x| bf16::from_f64(x)).collect(),
        )?),
        other => bail!("expected a float type, got {other}"),
    })
}

/// A float tensor of the same type as `like`.
pub fn float_like(like: &Tensor, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    float_of(like.dtype(), shape, v)
}

fn one(t: Tensor) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(t)])
}

fn require_float(t: &Tensor, what: &str) -> Result<(), KernelError> {
    if !matches!(
        t.dtype(),
        DataType::Float | DataType::Double | DataType::Float16 | DataType::Bfloat16
    ) {
        bail!("{what} must be a float tensor, got {}", t.dtype());
    }
    Ok(())
}

/// The element count of a shape about to be allocated (in f64), checked
/// against the memory budget.
fn numel(shape: &[usize]) -> Result<usize, KernelError> {
    Ok(crate::tensor::budget::check(shape, 8)?)
}

fn dim_of(v: i64, what: &str) -> Result<usize, KernelError> {
    if v < 0 {
        bail!("{what} must be non-negative, got {v}");
    }
    Ok(v as usize)
}

// ---------------------------------------------------------------- CumProd

pub fn cum_prod(info: &NodeInfo) -> Result<Kernel, KernelError> {
    super::manip::cumulative(info, super::manip::Cumulative::Prod)
}

// ---------------------------------------------------------------- BitCast

/// Little-endian bytes of every element.
fn to_bytes(t: &Tensor) -> Result<(Vec<u8>, usize), KernelError> {
    macro_rules! le {
        ($a:expr, $w:expr) => {
            ($a.iter().flat_map(|v| v.to_le_bytes()).collect(), $w)
        };
    }
    Ok(match t {
        Tensor::F32(a) => le!(a, 4),
        Tensor::F64(a) => le!(a, 8),
        Tensor::F16(a) => le!(a, 2),
        Tensor::BF16(a) => le!(a, 2),
        Tensor::I8(a) => le!(a, 1),
        Tensor::I16(a) => le!(a, 2),
        Tensor::I32(a) => le!(a, 4),
        Tensor::I64(a) => le!(a, 8),
        Tensor::U8(a) => le!(a, 1),
        Tensor::U16(a) => le!(a, 2),
        Tensor::U32(a) => le!(a, 4),
        Tensor::U64(a) => le!(a, 8),
        Tensor::Bool(a) => (a.iter().map(|&b| b as u8).collect(), 1),
        other => bail!("BitCast does not accept {}", other.dtype()),
    })
}

fn from_bytes(dt: DataType, shape: &[usize], b: &[u8]) -> Result<Tensor, KernelError> {
    macro_rules! de {
        ($t:ty, $w:expr) => {{
            let v: Vec<$t> = b
                .chunks_exact($w)
                .map(|c| {
                    let mut arr = [0u8; $w];
                    arr.copy_from_slice(c);
                    <$t>::from_le_bytes(arr)
                })
                .collect();
            <$t as Elem>::wrap(ArrayD::from_shape_vec(IxDyn(shape), v)?)
        }};
    }
    Ok(match dt {
        DataType::Float => de!(f32, 4),
        DataType::Double => de!(f64, 8),
        DataType::Float16 => de!(f16, 2),
        DataType::Bfloat16 => de!(bf16, 2),
        DataType::Int8 => de!(i8, 1),
        DataType::Int16 => de!(i16, 2),
        DataType::Int32 => de!(i32, 4),
        DataType::Int64 => de!(i64, 8),
        DataType::Uint8 => de!(u8, 1),
        DataType::Uint16 => de!(u16, 2),
        DataType::Uint32 => de!(u32, 4),
        DataType::Uint64 => de!(u64, 8),
        DataType::Bool => Tensor::Bool(ArrayD::from_shape_vec(
            IxDyn(shape),
            b.iter().map(|&x| x != 0).collect(),
        )?),
        other => bail!("BitCast cannot produce {other}"),
    })
}

pub fn bit_cast(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let to = info
        .attrs
        .int("to")
        .ok_or_else(|| KernelError::new("BitCast needs attribute 'to'"))?;
    let to = DataType::from_code(to as i32)
        .ok_or_else(|| KernelError::new(format!("unknown type code {to}")))?;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let (bytes, w) = to_bytes(x)?;
        let tw = to.byte_size().unwrap_or(0);
        if tw != w {
            bail!(
                "BitCast from {} to {to} changes the element size ({w} vs {tw} bytes)",
                x.dtype()
            );
        }
        one(from_bytes(to, x.shape(), &bytes)?)
    }))
}

// ---------------------------------------------------------------- CenterCropPad

pub fn center_crop_pad(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let axes = info.attrs.ints("axes");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let target = ints_in(ins, 1)?;
        let r = x.rank();
        let axes: Vec<usize> = match &axes {
            Some(a) => a
                .iter()
                .map(|&v| norm_axis(v, r))
                .collect::<Result<_, _>>()?,
            None => (0..r).collect(),
        };
        if axes.len() != target.len() {
            bail!("shape has {} values for {} axes", target.len(), axes.len());
        }
        let mut out_shape = x.shape().to_vec();
        for (&a, &t) in axes.iter().zip(&target) {
            out_shape[a] = dim_of(t, "shape")?;
        }
        numel(&out_shape)?;
        // For each axis: source offset (crop) and destination offset (pad).
        let ish = x.shape().to_vec();
        let mut src_off = vec![0usize; r];
        let mut dst_off = vec![0usize; r];
        let mut span = ish.clone();
        for a in 0..r {
            let (i, o) = (ish[a], out_shape[a]);
            if o < i {
                src_off[a] = (i - o) / 2;
                span[a] = o;
            } else {
                dst_off[a] = (o - i) / 2;
                span[a] = i;
            }
        }
        let ist = strides(&ish);
        let ost = strides(&out_shape);
        let mut pairs = Vec::new();
        for_each_index(&span, |idx| {
            let mut s = 0;
            let mut d = 0;
            for a in 0..r {
                s += (idx[a] + src_off[a]) * ist[a];
                d += (idx[a] + dst_off[a]) * ost[a];
            }
            pairs.push((s, d));
        });
        let mut out = Tensor::zeros(x.dtype(), &out_shape)?;
        let src = x.to_standard();
        macro_rules! copy {
            ($($v:ident),*) => {
                match (&src, &mut out) {
                    $((Tensor::$v(s), Tensor::$v(o)) => {
                        let (Some(s), Some(o)) = (s.as_slice(), o.as_slice_mut()) else {
                            bail!("internal layout error");
                        };
                        for &(a, b) in &pairs {
                            o[b] = s[a].clone();
                        }
                    })*
                    (Tensor::Small { data: s, .. }, Tensor::Small { data: o, .. }) => {
                        let (Some(s), Some(o)) = (s.as_slice(), o.as_slice_mut()) else {
                            bail!("internal layout error");
                        };
                        for &(a, b) in &pairs {
                            o[b] = s[a];
                        }
                    }
                    _ => bail!("internal type mismatch"),
                }
            };
        }
        copy!(F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str);
        one(out)
    }))
}

// ---------------------------------------------------------------- Shrink

fn shrink_typed<T: Num>(x: &Tensor, bias: f64, lambd: f64) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "input")?;
    Ok(T::wrap(a.mapv(|v| {
        let f = v.to_f64();
        if f < -lambd {
            T::from_f64(f + bias)
        } else if f > lambd {
            T::from_f64(f - bias)
        } else {
            T::zero()
        }
    })))
}

pub fn shrink(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let bias = info.attrs.float_or("bias", 0.0) as f64;
    let lambd = info.attrs.float_or("lambd", 0.5) as f64;
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        one(dispatch_num!(
            x,
            shrink_typed(x, bias, lambd),
            bail!("Shrink does not accept {}", x.dtype())
        )?)
    }))
}

// ---------------------------------------------------------------- Det

/// Determinant of an n×n row-major matrix by LU with partial pivoting.
pub fn det(m: &mut [f64], n: usize) -> f64 {
    let mut d = 1.0;
    for c in 0..n {
        let mut p = c;
        for r in c + 1..n {
            if m[r * n + c].abs() > m[p * n + c].abs() {
                p = r;
            }
        }
        if m[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for k in 0..n {
                m.swap(p * n + k, c * n + k);
            }
            d = -d;
        }
        let piv = m[c * n + c];
        d *= piv;
        for r in c + 1..n {
            let f = m[r * n + c] / piv;
            if f != 0.0 {
                for k in c..n {
                    m[r * n + k] -= f * m[c * n + k];
                }
            }
        }
    }
    d
}

pub fn det_op(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        require_float(x, "X")?;
        let sh = x.shape();
        let r = sh.len();
        if r < 2 || sh[r - 1] != sh[r - 2] {
            bail!("Det needs (..., M, M) input, got {sh:?}");
        }
        let n = sh[r - 1];
        let v = f64_of(x, "X")?;
        let out: Vec<f64> = if n == 0 {
            vec![1.0; sh[..r - 2].iter().product()]
        } else {
            v.chunks(n * n).map(|c| det(&mut c.to_vec(), n)).collect()
        };
        one(float_like(x, &sh[..r - 2], out)?)
    }))
}

// ---------------------------------------------------------------- DynamicQuantizeLinear

fn round_half_even(v: f64) -> f64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 {
        2.0 * (v / 2.0).round()
    } else {
        r
    }
}

pub fn dynamic_quantize_linear(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(|_, ins| {
        let x = tensor_in(ins, 0)?;
        require_float(x, "x")?;
        let v = f64_of(x, "x")?;
        let mn = v.iter().copied().fold(0.0f64, f64::min);
        let mx = v.iter().copied().fold(0.0f64, f64::max);
        let scale = ((mx - mn) / 255.0) as f32 as f64;
        let zp = if scale == 0.0 {
            0.0
        } else {
            round_half_even((0.0 - mn) / scale).clamp(0.0, 255.0)
        };
        let y: Vec<u8> = v
            .iter()
            .map(|&e| {
                if scale == 0.0 {
                    zp as u8
                } else {
                    (round_half_even(((e as f32) / (scale as f32)) as f64) + zp).clamp(0.0, 255.0)
                        as u8
                }
            })
            .collect();
        Ok(vec![
            Value::Tensor(Tensor::from_vec(x.shape(), y)?),
            Value::Tensor(Tensor::scalar(scale as f32)),
            Value::Tensor(Tensor::scalar(zp as u8)),
        ])
    }))
}

// ---------------------------------------------------------------- MaxUnpool

pub fn max_unpool(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let ks = info
        .attrs
        .ints("kernel_shape")
        .ok_or_else(|| KernelError::new("MaxUnpool needs kernel_shape"))?;
    let nsp = ks.len();
    let pads = info.attrs.ints("pads").unwrap_or_else(|| vec![0; 2 * nsp]);
    let strides_a = info.attrs.ints("strides").unwrap_or_else(|| vec![1; nsp]);
    if pads.len() != 2 * nsp || strides_a.len() != nsp {
        bail!("MaxUnpool pads/strides do not match kernel_shape");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let idx = tensor_in(ins, 1)?;
        if idx.shape() != x.shape() {
            bail!(
                "I shape {:?} differs from X shape {:?}",
                idx.shape(),
                x.shape()
            );
        }
        if x.rank() != nsp + 2 {
            bail!("X must have rank {}, got {}", nsp + 2, x.rank());
        }
        let mut default = x.shape()[..2].to_vec();
        for i in 0..nsp {
            let d = (x.shape()[i + 2] as i64 - 1) * strides_a[i] + ks[i] - pads[i] - pads[i + nsp];
            default.push(dim_of(d, "output size")?);
        }
        let out_shape: Vec<usize> = match opt_tensor_in(ins, 2)? {
            Some(_) => {
                let s = ints_in(ins, 2)?;
                s.iter()
                    .map(|&d| dim_of(d, "output_shape"))
                    .collect::<Result<_, _>>()?
            }
            None => default.clone(),
        };
        if out_shape.len() != x.rank() {
            bail!("output_shape must have {} values", x.rank());
        }
        let total = numel(&out_shape)?;
        let dtotal = numel(&default)?;
        let dst = strides(&default);
        let ost = strides(&out_shape);
        let iv = idx.to_i64_vec()?;
        let xv = f64_of(x, "X")?;
        let mut out = vec![0.0; total];
        for (k, &i) in iv.iter().enumerate() {
            if i < 0 || i as usize >= dtotal {
                bail!("index {i} is out of range for the unpooled size {dtotal}");
            }
            // Indices address the default unpooled shape; place each value
            // at the same coordinates of the requested output shape.
            let mut rem = i as usize;
            let mut at = 0;
            for a in 0..default.len() {
                let c = rem / dst[a];
                rem %= dst[a];
                if c >= out_shape[a] {
                    bail!("index {i} falls outside output_shape {out_shape:?}");
                }
                at += c * ost[a];
            }
            out[at] = xv[k];
        }
        one(num_from_f64(x.dtype(), &out_shape, out)?)
    }))
}

fn num_from_typed<T: Num>(shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    Ok(T::wrap(ArrayD::from_shape_vec(
        IxDyn(shape),
        v.into_iter().map(T::from_f64).collect(),
    )?))
}

/// A numeric tensor of type `dt` from f64 values.
pub fn num_from_f64(dt: DataType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, KernelError> {
    let probe = Tensor::zeros(dt, &[0])?;
    dispatch_num!(
        probe,
        num_from_typed(shape, v),
        bail!("expected a numeric type, got {dt}")
    )
}

// ---------------------------------------------------------------- AffineGrid

// ---------------------------------------------------------------- Col2Im

pub fn col2im(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let dil = info.attrs.ints("dilations");
    let pads = info.attrs.ints("pads");
    let strd = info.attrs.ints("strides");
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        require_float(x, "input")?;
        let img = ints_in(ins, 1)?;
        let blk = ints_in(ins, 2)?;
        let k = img.len();
        if blk.len() != k || k == 0 {
            bail!("image_shape and block_shape must have the same non-zero length");
        }
        let img: Vec<usize> = img
            .iter()
            .map(|&d| dim_of(d, "image_shape"))
            .collect::<Result<_, _>>()?;
        let blk: Vec<usize> = blk
            .iter()
            .map(|&d| dim_of(d, "block_shape"))
            .collect::<Result<_, _>>()?;
        let dil = dil.clone().unwrap_or_else(|| vec![1; k]);
        let pads = pads.clone().unwrap_or_else(|| vec![0; 2 * k]);
        let strd = strd.clone().unwrap_or_else(|| vec![1; k]);
        if dil.len() != k || pads.len() != 2 * k || strd.len() != k {
            bail!("dilations/pads/strides do not match the image rank {k}");
        }
        if dil.iter().chain(&strd).any(|&v| v <= 0) {
            bail!("dilations and strides must be positive");
        }
        let sh = x.shape();
        if sh.len() != 3 {
            bail!("input must have rank 3, got {sh:?}");
        }
        let bprod: usize = blk.iter().product();
        if bprod == 0 || sh[1] % bprod != 0 {
            bail!(
                "input dimension 1 ({}) is not a multiple of the block size {bprod}",
                sh[1]
            );
        }
        let c = sh[1] / bprod;
        // Number of block positions along each axis.
        let mut cnt = vec![0usize; k];
        for i in 0..k {
            let eff = dil[i] * (blk[i] as i64 - 1) + 1;
            let span = img[i] as i64 + pads[i] + pads[i + k] - eff;
            if span < 0 {
                bail!("block does not fit the padded image on axis {i}");
            }
            cnt[i] = (span / strd[i] + 1) as usize;
        }
        let l: usize = cnt.iter().product();
        if sh[2] != l {
            bail!("input has {} blocks, the geometry gives {l}", sh[2]);
        }
        let n = sh[0];
        let v = f64_of(x, "input")?;
        let ipix: usize = img.iter().product();
        let mut out_shape = vec![n, c];
        out_shape.extend_from_slice(&img);
        let mut out = vec![0.0; numel(&out_shape)?];
        let ist = strides(&img);
        let mut blocks = Vec::new();
        for_each_index(&blk, |b| blocks.push(b.to_vec()));
        let mut poss = Vec::new();
        for_each_index(&cnt, |p| poss.push(p.to_vec()));
        for b in 0..n {
            for ch in 0..c {
                for (bi, bo) in blocks.iter().enumerate() {
                    let row = ch * bprod + bi;
                    for (li, p) in poss.iter().enumerate() {
                        let mut at = 0usize;
                        let mut inside = true;
                        for i in 0..k {
                            let pos = p[i] as i64 * strd[i] + bo[i] as i64 * dil[i] - pads[i];
                            if pos < 0 || pos >= img[i] as i64 {
                                inside = false;
                                break;
                            }
                            at += pos as usize * ist[i];
                        }
                        if inside {
                            out[(b * c + ch) * ipix + at] += v[(b * sh[1] + row) * l + li];
                        }
                    }
                }
            }
        }
        one(float_like(x, &out_shape, out)?)
    }))
}

// ---------------------------------------------------------------- training optimisers

/// Splits the variadic inputs after R and T into `groups` equal groups.
fn opt_groups<'v>(
    ins: &[Option<&'v Value>],
    groups: usize,
) -> Result<Vec<Vec<&'v Tensor>>, KernelError> {
    let rest = ins.len().saturating_sub(2);
    if rest == 0 || !rest.is_multiple_of(groups) {
        bail!(
            "expected R, T and {groups} groups of tensors, got {} inputs",
            ins.len()
        );
    }
    let n = rest / groups;
    (0..groups)
        .map(|g| (0..n).map(|i| tensor_in(ins, 2 + g * n + i)).collect())
        .collect()
}

fn scalar_f64(t: &Tensor, what: &str) -> Result<f64, KernelError> {
    let v = f64_of(t, what)?;
    match v[..] {
        [x] => Ok(x),
        _ => bail!("{what} must be a scalar, got shape {:?}", t.shape()),
    }
}

fn same_shape(a: &Tensor, b: &Tensor, what: &str) -> Result<(), KernelError> {
    if a.shape() != b.shape() {
        bail!("{what}: shapes {:?} and {:?} differ", a.shape(), b.shape());
    }
    Ok(())
}

pub fn adagrad(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let decay = info.attrs.float_or("decay_factor", 0.0) as f64;
    let eps = info.attrs.float_or("epsilon", 1e-6) as f64;
    let normc = info.attrs.float_or("norm_coefficient", 0.0) as f64;
    Ok(Box::new(move |_, ins| {
        let r = scalar_f64(tensor_in(ins, 0)?, "R")?;
        let t = scalar_f64(tensor_in(ins, 1)?, "T")?;
        let g = opt_groups(ins, 3)?;
        let lr = r / (1.0 + t * decay);
        let mut xs = Vec::new();
        let mut hs = Vec::new();
        for ((&x, &gr), &h) in g[0].iter().zip(&g[1]).zip(&g[2]) {
            same_shape(x, gr, "X and G")?;
            same_shape(x, h, "X and H")?;
            let (xv, gv, hv) = (f64_of(x, "X")?, f64_of(gr, "G")?, f64_of(h, "H")?);
            let mut nx = Vec::with_capacity(xv.len());
            let mut nh = Vec::with_capacity(xv.len());
            for k in 0..xv.len() {
                let greg = normc * xv[k] + gv[k];
                let h2 = hv[k] + greg * greg;
                nh.push(h2);
                nx.push(xv[k] - lr * greg / (h2.sqrt() + eps));
            }
            xs.push(Value::Tensor(float_like(x, x.shape(), nx)?));
            hs.push(Value::Tensor(float_like(h, h.shape(), nh)?));
        }
        xs.extend(hs);
        Ok(xs)
    }))
}

pub fn momentum(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info
        .attrs
        .float("alpha")
        .ok_or_else(|| KernelError::new("Momentum needs alpha"))? as f64;
    let beta = info
        .attrs
        .float("beta")
        .ok_or_else(|| KernelError::new("Momentum needs beta"))? as f64;
    let normc = info.attrs.float_or("norm_coefficient", 0.0) as f64;
    let nesterov = match info.attrs.string_or("mode", "standard").as_str() {
        "standard" => false,
        "nesterov" => true,
        other => bail!("unknown Momentum mode '{other}'"),
    };
    Ok(Box::new(move |_, ins| {
        let r = scalar_f64(tensor_in(ins, 0)?, "R")?;
        let t = scalar_f64(tensor_in(ins, 1)?, "T")?;
        let g = opt_groups(ins, 3)?;
        let b = if t > 0.0 { beta } else { 1.0 };
        let mut xs = Vec::new();
        let mut vs = Vec::new();
        for ((&x, &gr), &v) in g[0].iter().zip(&g[1]).zip(&g[2]) {
            same_shape(x, gr, "X and G")?;
            same_shape(x, v, "X and V")?;
            let (xv, gv, vv) = (f64_of(x, "X")?, f64_of(gr, "G")?, f64_of(v, "V")?);
            let mut nx = Vec::with_capacity(xv.len());
            let mut nv = Vec::with_capacity(xv.len());
            for k in 0..xv.len() {
                let greg = normc * xv[k] + gv[k];
                let v2 = alpha * vv[k] + b * greg;
                nv.push(v2);
                nx.push(if nesterov {
                    xv[k] - r * (greg + alpha * v2)
                } else {
                    xv[k] - r * v2
                });
            }
            xs.push(Value::Tensor(float_like(x, x.shape(), nx)?));
            vs.push(Value::Tensor(float_like(v, v.shape(), nv)?));
        }
        xs.extend(vs);
        Ok(xs)
    }))
}

pub fn adam(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let alpha = info.attrs.float_or("alpha", 0.9) as f64;
    let beta = info.attrs.float_or("beta", 0.999) as f64;
    let eps = info.attrs.float_or("epsilon", 1e-6) as f64;
    let normc = info.attrs.float_or("norm_coefficient", 0.0) as f64;
    let post = info.attrs.float_or("norm_coefficient_post", 0.0) as f64;
    Ok(Box::new(move |_, ins| {
        let r = scalar_f64(tensor_in(ins, 0)?, "R")?;
        let t = scalar_f64(tensor_in(ins, 1)?, "T")?;
        let g = opt_groups(ins, 4)?;
        let lr = if t > 0.0 {
            r * (1.0 - beta.powf(t)).sqrt() / (1.0 - alpha.powf(t))
        } else {
            r
        };
        let (mut xs, mut vs, mut hs) = (Vec::new(), Vec::new(), Vec::new());
        for (((&x, &gr), &v), &h) in g[0].iter().zip(&g[1]).zip(&g[2]).zip(&g[3]) {
            same_shape(x, gr, "X and G")?;
            same_shape(x, v, "X and V")?;
            same_shape(x, h, "X and H")?;
            let (xv, gv, vv, hv) = (
                f64_of(x, "X")?,
                f64_of(gr, "G")?,
                f64_of(v, "V")?,
                f64_of(h, "H")?,
            );
            let (mut nx, mut nv, mut nh) = (vec![], vec![], vec![]);
            for k in 0..xv.len() {
                let greg = normc * xv[k] + gv[k];
                let v2 = alpha * vv[k] + (1.0 - alpha) * greg;
                let h2 = beta * hv[k] + (1.0 - beta) * greg * greg;
                let x2 = xv[k] - lr * v2 / (h2.sqrt() + eps);
                nx.push((1.0 - post) * x2);
                nv.push(v2);
                nh.push(h2);
            }
            xs.push(Value::Tensor(float_like(x, x.shape(), nx)?));
            vs.push(Value::Tensor(float_like(v, v.shape(), nv)?));
            hs.push(Value::Tensor(float_like(h, h.shape(), nh)?));
        }
        xs.extend(vs);
        xs.extend(hs);
        Ok(xs)
    }))
}

// ---------------------------------------------------------------- DeformConv

/// Bilinear sample of an h×w plane at (y, x); points outside read as 0.
fn bilinear(p: &[f64], h: usize, w: usize, y: f64, x: f64) -> f64 {
    if !(y > -1.0 && y < h as f64 && x > -1.0 && x < w as f64) {
        return 0.0;
    }
    let (y0, x0) = (y.floor(), x.floor());
    let (fy, fx) = (y - y0, x - x0);
    let at = |yy: f64, xx: f64| {
        if yy >= 0.0 && xx >= 0.0 && (yy as usize) < h && (xx as usize) < w {
            p[yy as usize * w + xx as usize]
        } else {
            0.0
        }
    };
    at(y0, x0) * (1.0 - fy) * (1.0 - fx)
        + at(y0, x0 + 1.0) * (1.0 - fy) * fx
        + at(y0 + 1.0, x0) * fy * (1.0 - fx)
        + at(y0 + 1.0, x0 + 1.0) * fy * fx
}

pub fn deform_conv(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = &info.attrs;
    let group = a.int_or("group", 1);
    let og = a.int_or("offset_group", 1);
    if group < 1 || og < 1 {
        bail!("group and offset_group must be positive");
    }
    let (group, og) = (group as usize, og as usize);
    let ks_attr = a.ints("kernel_shape");
    let dil = a.ints("dilations").unwrap_or_else(|| vec![1, 1]);
    let pads = a.ints("pads").unwrap_or_else(|| vec![0; 4]);
    let st = a.ints("strides").unwrap_or_else(|| vec![1, 1]);
    if dil.len() != 2 || pads.len() != 4 || st.len() != 2 {
        bail!("DeformConv supports 2-D convolutions only");
    }
    if dil.iter().chain(&st).any(|&v| v <= 0) {
        bail!("dilations and strides must be positive");
    }
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let w = tensor_in(ins, 1)?;
        let off = tensor_in(ins, 2)?;
        let b = opt_tensor_in(ins, 3)?;
        let m = opt_tensor_in(ins, 4)?;
        require_float(x, "X")?;
        let (xs, ws) = (x.shape(), w.shape());
        if xs.len() != 4 || ws.len() != 4 {
            bail!("DeformConv supports 2-D inputs only (X rank 4), got {xs:?} and {ws:?}");
        }
        let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
        let (oc, cg, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
        if let Some(k) = &ks_attr {
            if k[..] != [kh as i64, kw as i64] {
                bail!("kernel_shape {k:?} differs from W's {:?}", &ws[2..]);
            }
        }
        if c % group != 0 || oc % group != 0 || cg * group != c || c % og != 0 {
            bail!("channel counts do not match group {group} / offset_group {og}");
        }
        let oh = (h as i64 + pads[0] + pads[2] - (dil[0] * (kh as i64 - 1) + 1)) / st[0] + 1;
        let ow = (wd as i64 + pads[1] + pads[3] - (dil[1] * (kw as i64 - 1) + 1)) / st[1] + 1;
        if oh <= 0 || ow <= 0 {
            bail!("the kernel does not fit the padded input");
        }
        let (oh, ow) = (oh as usize, ow as usize);
        let kk = kh * kw;
        if off.shape() != [n, og * kk * 2, oh, ow] {
            bail!(
                "offset must have shape {:?}, got {:?}",
                [n, og * kk * 2, oh, ow],
                off.shape()
            );
        }
        if let Some(m) = m {
            if m.shape() != [n, og * kk, oh, ow] {
                bail!(
                    "mask must have shape {:?}, got {:?}",
                    [n, og * kk, oh, ow],
                    m.shape()
                );
            }
        }
        if let Some(b) = b {
            if b.shape() != [oc] {
                bail!("B must have shape [{oc}], got {:?}", b.shape());
            }
        }
        // Output and sampled columns live together.
        crate::tensor::budget::check_together(&[
            (&[n, oc, oh, ow], 8, 1),
            (&[n, c, kk, oh, ow], 8, 1),
        ])?;
        let xv = f64_of(x, "X")?;
        let wv = f64_of(w, "W")?;
        let ov = f64_of(off, "offset")?;
        let mv = m.map(|m| f64_of(m, "mask")).transpose()?;
        let bv = b.map(|b| f64_of(b, "B")).transpose()?;
        let cpo = c / og;
        let plane = oh * ow;
        // Sampled columns: [n][c][k][oh*ow].
        let mut cols = vec![0.0; n * c * kk * plane];
        for bi in 0..n {
            for ch in 0..c {
                let g = ch / cpo;
                let src = &xv[(bi * c + ch) * h * wd..(bi * c + ch + 1) * h * wd];
                for ki in 0..kh {
                    for kj in 0..kw {
                        let k = ki * kw + kj;
                        let oy_c = (bi * og * kk * 2 + (g * kk + k) * 2) * plane;
                        let ox_c = oy_c + plane;
                        for p in 0..oh {
                            for q in 0..ow {
                                let pos = p * ow + q;
                                let y = (p as i64 * st[0] - pads[0] + ki as i64 * dil[0]) as f64
                                    + ov[oy_c + pos];
                                let xx = (q as i64 * st[1] - pads[1] + kj as i64 * dil[1]) as f64
                                    + ov[ox_c + pos];
                                let mut v = bilinear(src, h, wd, y, xx);
                                if let Some(mv) = &mv {
                                    v *= mv[(bi * og * kk + g * kk + k) * plane + pos];
                                }
                                cols[((bi * c + ch) * kk + k) * plane + pos] = v;
                            }
                        }
                    }
                }
            }
        }
        let ocg = oc / group;
        let mut out = vec![0.0; n * oc * plane];
        for bi in 0..n {
            for o in 0..oc {
                let g = o / ocg;
                let dst = &mut out[(bi * oc + o) * plane..(bi * oc + o + 1) * plane];
                let bias = bv.as_ref().map_or(0.0, |b| b[o]);
                dst.iter_mut().for_each(|v| *v = bias);
                for ci in 0..cg {
                    let ch = g * cg + ci;
                    for k in 0..kk {
                        let wgt = wv[(o * cg + ci) * kk + k];
                        let col = &cols[((bi * c + ch) * kk + k) * plane
                            ..((bi * c + ch) * kk + k + 1) * plane];
                        for (d, s) in dst.iter_mut().zip(col) {
                            *d += wgt * s;
                        }
                    }
                }
            }
        }
        one(float_like(x, &[n, oc, oh, ow], out)?)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn det_of_known_matrices() {
        let mut m = vec![1.0, 2.0, 3.0, 4.0];
        assert!((det(&mut m, 2) + 2.0).abs() < 1e-12);
        let mut m = vec![0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0];
        assert!((det(&mut m, 3) + 3.0).abs() < 1e-12);
        let mut m = vec![1.0, 2.0, 2.0, 4.0];
        assert_eq!(det(&mut m, 2), 0.0);
    }

    #[test]
    fn bitcast_roundtrip() {
        let t = Tensor::from_vec(&[2], vec![1.0f32, -2.5]).unwrap();
        let (b, w) = to_bytes(&t).unwrap();
        assert_eq!(w, 4);
        let i = from_bytes(DataType::Int32, &[2], &b).unwrap();
        assert_eq!(i.to_i64_vec().unwrap()[0], 1.0f32.to_bits() as i64);
    }

    #[test]
    fn rounding_is_half_even() {
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(3.5), 4.0);
        assert_eq!(round_half_even(-2.5), -2.0);
        assert_eq!(round_half_even(2.4), 2.0);
    }
}
