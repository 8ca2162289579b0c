//! The sliding window of pooling and convolution: kernel, strides,
//! dilations and pads (explicit or `auto_pad`, with `ceil_mode`) resolved
//! against an input's spatial sizes, and the odometer over a shape that
//! walks windows and outputs.

use crate::bail;
use crate::ops::kernel::{KernelError, NodeInfo};

/// Resolved geometry of a pooling / convolution window over the spatial axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub kernel: Vec<usize>,
    pub strides: Vec<usize>,
    pub dilations: Vec<usize>,
    /// Begin pads per spatial axis.
    pub pad_begin: Vec<usize>,
    pub pad_end: Vec<usize>,
    pub out: Vec<usize>,
}

/// Window attributes as given on the node.
#[derive(Clone, Debug)]
pub struct WindowAttrs {
    pub kernel: Option<Vec<i64>>,
    pub strides: Option<Vec<i64>>,
    pub dilations: Option<Vec<i64>>,
    pub pads: Option<Vec<i64>>,
    pub auto_pad: String,
    pub ceil_mode: bool,
}

impl WindowAttrs {
    pub fn from_info(info: &NodeInfo) -> WindowAttrs {
        WindowAttrs {
            kernel: info.attrs.ints("kernel_shape"),
            strides: info.attrs.ints("strides"),
            dilations: info.attrs.ints("dilations"),
            pads: info.attrs.ints("pads"),
            auto_pad: info.attrs.string_or("auto_pad", "NOTSET"),
            ceil_mode: info.attrs.int_or("ceil_mode", 0) != 0,
        }
    }

    /// Resolves the window over `spatial` input sizes (`kernel` from the
    /// weights when the attribute is absent).
    pub fn resolve(
        &self,
        spatial: &[usize],
        kernel: Option<&[usize]>,
    ) -> Result<Window, KernelError> {
        let n = spatial.len();
        let pos = |v: &Option<Vec<i64>>, what: &str, min: i64| -> Result<Vec<usize>, KernelError> {
            match v {
                None => Ok(vec![1; n]),
                Some(v) if v.len() == n => v
                    .iter()
                    .map(|&x| {
                        if x < min || x > 1 << 24 {
                            bail!("{what} value {x} is out of range")
                        } else {
                            Ok(x as usize)
                        }
                    })
                    .collect(),
                Some(v) => bail!("{what} has {} values for {n} spatial axes", v.len()),
            }
        };
        let k = match (&self.kernel, kernel) {
            (Some(_), _) => pos(&self.kernel, "kernel_shape", 1)?,
            (None, Some(k)) => k.to_vec(),
            (None, None) => bail!("kernel_shape is required"),
        };
        if k.len() != n {
            bail!(
                "the kernel has {} axes, the input {n} spatial axes",
                k.len()
            );
        }
        let s = pos(&self.strides, "strides", 1)?;
        let d = pos(&self.dilations, "dilations", 1)?;
        let mut pb = vec![0usize; n];
        let mut pe = vec![0usize; n];
        let mut out = vec![0usize; n];
        for i in 0..n {
            let ext = (k[i] - 1) * d[i] + 1;
            match self.auto_pad.as_str() {
                "SAME_UPPER" | "SAME_LOWER" => {
                    let o = spatial[i].div_ceil(s[i]);
                    let total = ((o.max(1) - 1) * s[i] + ext).saturating_sub(spatial[i]);
                    let small = total / 2;
                    if self.auto_pad == "SAME_UPPER" {
                        pb[i] = small;
                        pe[i] = total - small;
                    } else {
                        pb[i] = total - small;
                        pe[i] = small;
                    }
                    out[i] = o;
                    continue;
                }
                "VALID" => {}
                "NOTSET" | "" => {
                    if let Some(p) = &self.pads {
                        if p.len() != 2 * n {
                            bail!("pads has {} values for {n} spatial axes", p.len());
                        }
                        if p[i] < 0 || p[i + n] < 0 || p[i] > 1 << 24 || p[i + n] > 1 << 24 {
                            bail!("pads {p:?} are out of range");
                        }
                        pb[i] = p[i] as usize;
                        pe[i] = p[i + n] as usize;
                    }
                }
                other => bail!("unknown auto_pad '{other}'"),
            }
            let full = spatial[i] + pb[i] + pe[i];
            if full < ext {
                bail!(
                    "the window ({ext}) is larger than the padded input ({full}) on spatial axis {i}"
                );
            }
            out[i] = if self.ceil_mode {
                let mut o = (full - ext).div_ceil(s[i]) + 1;
                // the last window must start inside the input or its begin pad
                if (o - 1) * s[i] >= spatial[i] + pb[i] {
                    o -= 1;
                }
                o
            } else {
                (full - ext) / s[i] + 1
            };
        }
        Ok(Window {
            kernel: k,
            strides: s,
            dilations: d,
            pad_begin: pb,
            pad_end: pe,
            out,
        })
    }
}

/// Advances a multi-index over `dims`; false when it wrapped around.
pub fn next_index(idx: &mut [usize], dims: &[usize]) -> bool {
    for i in (0..idx.len()).rev() {
        idx[i] += 1;
        if idx[i] < dims[i] {
            return true;
        }
        idx[i] = 0;
    }
    false
}

/// `dst[i] = src[i * stride]` for every `i` of `dst`: the input a strided
/// window reads along one axis (`src` holds at least
/// `(dst.len() - 1) * stride + 1` values).
#[inline(always)]
pub fn copy_strided(dst: &mut [f32], src: &[f32], stride: usize) {
    if stride <= 1 {
        return copy_run(dst, &src[..dst.len()]);
    }
    zip_strided(dst, src, stride, |d, v| *d = v);
}

/// Runs up to this long are moved as a few fixed-size blocks by
/// [`copy_run`] and [`zero_run`]; longer ones by `memcpy` / `memset`.
const SHORT_RUN: usize = 32;

/// `dst.copy_from_slice(src)`, with the short runs of a small image (13
/// columns of 13x13) moved as two to four blocks of 8 or 4 floats, the
/// last one overlapping, rather than by a call to `memcpy` each: packing a
/// 3x3 convolution of 48 channels over 13x13 made 5,600 such calls, and
/// they and their `memset`s took a fifth of its time.
#[inline(always)]
pub fn copy_run<T: Copy>(dst: &mut [T], src: &[T]) {
    let n = dst.len();
    assert_eq!(n, src.len(), "copy_run: lengths differ");
    if n > SHORT_RUN {
        return dst.copy_from_slice(src);
    }
    short_blocks(n, |at, b| {
        if b == 8 {
            block::<_, 8>(dst, at).copy_from_slice(&src[at..at + 8]);
        } else if b == 4 {
            block::<_, 4>(dst, at).copy_from_slice(&src[at..at + 4]);
        } else {
            dst[at] = src[at];
        }
    });
}

/// `dst.fill(0.0)`, with short runs stored as blocks as [`copy_run`] does.
#[inline(always)]
pub fn zero_run(dst: &mut [f32]) {
    let n = dst.len();
    if n > SHORT_RUN {
        return dst.fill(0.0);
    }
    short_blocks(n, |at, b| {
        if b == 8 {
            *block::<_, 8>(dst, at) = [0.0; 8];
        } else if b == 4 {
            *block::<_, 4>(dst, at) = [0.0; 4];
        } else {
            dst[at] = 0.0;
        }
    });
}

/// The `B` values of `dst` from `at` on, as an array.
#[inline(always)]
fn block<T, const B: usize>(dst: &mut [T], at: usize) -> &mut [T; B] {
    (&mut dst[at..at + B]).try_into().expect("B floats")
}

/// Covers `0..n` (`n <= SHORT_RUN`) with calls `f(at, width)` of widths 8,
/// 4 or 1 that may overlap, with no loop (a loop of moves is what LLVM
/// turns back into a `memcpy` call).
#[inline(always)]
fn short_blocks(n: usize, mut f: impl FnMut(usize, usize)) {
    debug_assert!(n <= SHORT_RUN);
    match n {
        0 => {}
        1..=3 => {
            f(0, 1);
            f(n / 2, 1);
            f(n - 1, 1);
        }
        4..=7 => {
            f(0, 4);
            f(n - 4, 4);
        }
        8..=16 => {
            f(0, 8);
            f(n - 8, 8);
        }
        _ => {
            f(0, 8);
            f(8, 8);
            f(n - 16, 8);
            f(n - 8, 8);
        }
    }
}

/// `f(&mut dst[i], src[i * stride])` for every `i` of `dst` (`src` as for
/// [`copy_strided`]). Strides 1 to 4 are loops of a stride LLVM knows,
/// which vectorise (`step_by`'s loop did not, and took three quarters of a
/// stride-2 depthwise convolution).
#[inline(always)]
pub fn zip_strided(dst: &mut [f32], src: &[f32], stride: usize, f: impl Fn(&mut f32, f32)) {
    let Some((last, head)) = dst.split_last_mut() else {
        return;
    };
    match stride {
        0 | 1 => every::<1>(head, src, &f),
        2 => every::<2>(head, src, &f),
        3 => every::<3>(head, src, &f),
        4 => every::<4>(head, src, &f),
        s => {
            for (d, c) in head.iter_mut().zip(src.chunks(s)) {
                f(d, c[0]);
            }
        }
    }
    f(last, src[head.len() * stride.max(1)]);
}

/// `f(&mut dst[i], src[S * i])` (`src` holds at least `S * dst.len()`
/// values).
#[inline(always)]
fn every<const S: usize>(dst: &mut [f32], src: &[f32], f: &impl Fn(&mut f32, f32)) {
    for (d, c) in dst.iter_mut().zip(src.chunks_exact(S)) {
        f(d, c[0]);
    }
}

/// Window attributes for tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::WindowAttrs;

    pub fn wa(k: &[i64], s: &[i64], pads: Option<&[i64]>, auto: &str, ceil: bool) -> WindowAttrs {
        WindowAttrs {
            kernel: Some(k.to_vec()),
            strides: Some(s.to_vec()),
            dilations: None,
            pads: pads.map(|p| p.to_vec()),
            auto_pad: auto.into(),
            ceil_mode: ceil,
        }
    }

    /// No kernel attribute (taken from the weights), given pads and strides.
    pub fn attrs(pads: Option<Vec<i64>>, strides: Option<Vec<i64>>) -> WindowAttrs {
        WindowAttrs {
            kernel: None,
            strides,
            dilations: None,
            pads,
            auto_pad: "NOTSET".into(),
            ceil_mode: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::wa;
    use super::{copy_run, copy_strided, zero_run};

    #[test]
    fn short_runs_write_exactly_their_own_values() {
        for n in 0..=40 {
            let src: Vec<f32> = (0..n).map(|i| i as f32 + 1.0).collect();
            // a sentinel on each side: nothing outside the run is written
            let mut buf = vec![-7.0f32; n + 2];
            copy_run(&mut buf[1..n + 1], &src);
            assert_eq!(buf[1..n + 1], src[..], "copy_run of {n}");
            assert_eq!((buf[0], buf[n + 1]), (-7.0, -7.0), "copy_run of {n}");
            zero_run(&mut buf[1..n + 1]);
            assert!(buf[1..n + 1].iter().all(|&v| v == 0.0), "zero_run of {n}");
            assert_eq!((buf[0], buf[n + 1]), (-7.0, -7.0), "zero_run of {n}");
        }
    }

    #[test]
    fn copy_strided_reads_every_stride_th_value_up_to_the_last_needed() {
        for stride in 1..=6 {
            for len in 0..40 {
                // exactly as long as needed: the last value read is the last
                let need = if len == 0 { 0 } else { (len - 1) * stride + 1 };
                let src: Vec<f32> = (0..need).map(|i| i as f32).collect();
                let mut dst = vec![-1.0; len];
                copy_strided(&mut dst, &src, stride);
                let want: Vec<f32> = (0..len).map(|i| (i * stride) as f32).collect();
                assert_eq!(dst, want, "stride {stride}, {len} values");
            }
        }
    }

    #[test]
    fn window_sizes() {
        let w = wa(&[3], &[2], Some(&[1, 1]), "NOTSET", false)
            .resolve(&[6], None)
            .unwrap();
        assert_eq!(w.out, vec![3]);
        let w = wa(&[3], &[2], None, "NOTSET", true)
            .resolve(&[6], None)
            .unwrap();
        assert_eq!(w.out, vec![3]); // (6-3)/2 ceil = 2, + 1
        let w = wa(&[3], &[2], None, "SAME_LOWER", false)
            .resolve(&[5], None)
            .unwrap();
        assert_eq!((w.out[0], w.pad_begin[0], w.pad_end[0]), (3, 1, 1));
        let w = wa(&[2], &[1], None, "SAME_LOWER", false)
            .resolve(&[4], None)
            .unwrap();
        assert_eq!((w.pad_begin[0], w.pad_end[0]), (1, 0));
        assert!(wa(&[9], &[1], None, "NOTSET", false)
            .resolve(&[4], None)
            .is_err());
    }
}
