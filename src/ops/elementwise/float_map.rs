//! The kernels of unary float operators: a scalar function over every
//! element, in one inlined loop for contiguous float32 data (split over the
//! rayon pool when large), through f64 for the other float types.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError};
use crate::ops::kernels::numeric::Num;
use crate::ops::kernels::typed;
use crate::tensor::{Tensor, Value};
use half::{bf16, f16};
use ndarray::ArrayD;

/// Elements per parallel chunk of a large f32 map.
const MAP_CHUNK: usize = 1 << 15;

/// `f` of every element of a contiguous f32 buffer, in one inlined loop;
/// large buffers are split over the rayon pool.
/// `f` is taken by reference and called as itself (not through the `&F`
/// forwarding impl, which the compiler may leave as a call per element).
/// For a function too large for the compiler to inline through a generic
/// call, use [`f32_slice_map!`] and [`map_f32_chunks`].
pub fn map_f32_slice<F: Fn(f32) -> f32 + Sync>(src: &[f32], f: &F) -> Vec<f32> {
    map_f32_chunks(src, &|o: &mut [f32], s: &[f32]| map_best(o, s, f))
}

/// `run(out_chunk, src_chunk)` over a fresh output the length of `src`:
/// one call for small buffers, chunks over the rayon pool for large ones.
pub fn map_f32_chunks(src: &[f32], run: &(impl Fn(&mut [f32], &[f32]) + Sync)) -> Vec<f32> {
    let mut out = vec![0f32; src.len()];
    if src.len() >= 2 * MAP_CHUNK && crate::ops::kernels::threads::current() > 1 {
        use rayon::prelude::*;
        out.par_chunks_mut(MAP_CHUNK)
            .zip(src.par_chunks(MAP_CHUNK))
            .for_each(|(o, s)| run(o, s));
    } else {
        run(&mut out, src);
    }
    out
}

/// `f32_slice_map!(fn name = f)` declares `fn name(o: &mut [f32], s: &[f32])`
/// computing `o[i] = f(s[i])` for the widest vector unit, with `f` (an
/// `#[inline(always)]` function, or a closure written in place) called
/// directly and so inlined into the loop. Handed to [`map_f32_slice`] as a
/// generic `Fn` instead, a function as large as `exp_f32::erf` stays a call
/// per element and the loop scalar (Erf over 262144 floats: 5.7 ms against
/// 0.2 in onnxruntime).
macro_rules! f32_slice_map {
    ($(#[$m:meta])* $vis:vis fn $name:ident = $f:expr) => {
        crate::ops::kernels::vector_unit::widest_fn! {
            $(#[$m])*
            $vis fn $name(o: &mut [f32], s: &[f32]) {
                for (o, &v) in o.iter_mut().zip(s) {
                    *o = $f(v);
                }
            }
        }
    };
}
pub(crate) use f32_slice_map;

/// `o[i] = f(s[i])`: one loop, which the compiler vectorises with `f`
/// inlined.
#[inline(always)]
fn map_plain(o: &mut [f32], s: &[f32], f: &impl Fn(f32) -> f32) {
    for (o, &v) in o.iter_mut().zip(s) {
        *o = f(v);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn map_avx512(o: &mut [f32], s: &[f32], f: &impl Fn(f32) -> f32) {
    map_plain(o, s, f)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn map_avx2(o: &mut [f32], s: &[f32], f: &impl Fn(f32) -> f32) {
    map_plain(o, s, f)
}

/// [`map_plain`] compiled for the widest vector unit this CPU has (16
/// lanes with AVX-512, 8 with AVX2 and FMA, else the baseline's 4): the
/// float32 activations (`exp_f32`) are branch-free polynomials, so width
/// is speed.
fn map_best(o: &mut [f32], s: &[f32], f: &impl Fn(f32) -> f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (and so AVX2 and FMA)
            return unsafe { map_avx512(o, s, f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA
            return unsafe { map_avx2(o, s, f) };
        }
    }
    map_plain(o, s, f)
}

/// `f` over every element of a float tensor (computed in f64, rounded
/// once). Monomorphic in `f`, so the loop over a contiguous f32 buffer
/// inlines it; large buffers are split over the rayon pool.
pub fn map_float<F: Fn(f64) -> f64 + Sync>(
    name: &str,
    x: &Tensor,
    f: F,
) -> Result<Tensor, KernelError> {
    Ok(match x {
        Tensor::F32(a) => match a.as_slice() {
            Some(src) => {
                let out = map_f32_slice(src, &|v| f(v as f64) as f32);
                Tensor::F32(ArrayD::from_shape_vec(a.raw_dim(), out)?)
            }
            None => Tensor::F32(a.mapv(|v| f(v as f64) as f32)),
        },
        Tensor::F64(a) => Tensor::F64(a.mapv(&f)),
        Tensor::F16(a) => Tensor::F16(a.mapv(|v| f16::from_f64(f(v.to_f64())))),
        Tensor::BF16(a) => Tensor::BF16(a.mapv(|v| bf16::from_f64(f(v.to_f64())))),
        _ => bail!("{name} does not accept {} (float types only)", x.dtype()),
    })
}

/// A kernel applying `f` (in f64) to every element of its float input.
pub fn float_kernel(name: &'static str, f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Kernel {
    Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        Ok(vec![Value::Tensor(map_float(name, x, &f)?)])
    })
}

/// A float kernel whose float32 inputs are computed in float32 by `f32f`
/// (a contiguous array); other types and layouts go through `f` in f64.
pub fn float_kernel_f32(
    name: &'static str,
    f32f: impl Fn(f32) -> f32 + Send + Sync + 'static,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Kernel {
    float_kernel_f32_slices(name, move |o, s| map_best(o, s, &f32f), f)
}

/// [`float_kernel_f32`] with the float32 computation given over slices
/// (`slices(out, src)`, as declared by [`f32_slice_map!`]).
pub fn float_kernel_f32_slices(
    name: &'static str,
    slices: impl Fn(&mut [f32], &[f32]) + Send + Sync + 'static,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Kernel {
    Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if let Tensor::F32(a) = x {
            if let Some(src) = a.as_slice() {
                let out = map_f32_chunks(src, &slices);
                return Ok(vec![Value::Tensor(Tensor::F32(ArrayD::from_shape_vec(
                    a.raw_dim(),
                    out,
                )?))]);
            }
        }
        Ok(vec![Value::Tensor(map_float(name, x, &f)?)])
    })
}

/// `f` over every element of a numeric tensor, in its own type. Generic in
/// `f` (not `&dyn Fn`, a call per element: Neg of 1x1024x256 f32 took
/// 0.73 ms, 13x onnxruntime).
pub fn num_map<T: Num>(x: &Tensor, f: impl Fn(T) -> T) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "X")?;
    let v = crate::tensor::mapped(a, |&v| f(v));
    Ok(T::wrap(ArrayD::from_shape_vec(a.raw_dim(), v)?))
}
