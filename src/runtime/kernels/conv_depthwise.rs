//! Depthwise 2-D convolution in f32: every group reads one input channel
//! (`group == C`), as in MobileNet-style backbones. Each output plane is a
//! sum of shifted, scaled rows of one input plane; stride-1 rows are
//! contiguous multiply-adds the compiler vectorises. No packing, no im2col:
//! the general GEMM path would pad every one-channel group to a full panel.

use super::conv_f32::ConvDims;

/// Output planes per parallel task when the pool has more than one thread.
const PLANES_PER_TASK: usize = 4;

/// Whether `d` is a 2-D convolution with one input channel per group.
pub fn applies(d: &ConvDims) -> bool {
    d.spatial.len() == 2 && d.group > 1 && d.group == d.c && d.m.is_multiple_of(d.group)
}

/// The column range `lo..hi` of output positions whose input column
/// `ox * stride + off` lies inside `0..width`.
fn inside(off: isize, stride: usize, width: usize, out: usize) -> (usize, usize) {
    let s = stride as isize;
    // smallest ox with ox * s + off >= 0
    let lo = if off >= 0 { 0 } else { ((-off) + s - 1) / s };
    // largest ox + 1 with ox * s + off < width
    let room = width as isize - off;
    let hi = if room <= 0 { 0 } else { (room + s - 1) / s };
    let hi = (hi as usize).min(out);
    (lo as usize, hi.max(lo as usize).min(out))
}

/// Y = W * X (+ B) for a depthwise convolution (`applies(d)` must hold).
pub fn conv(x: &[f32], w: &[f32], bias: Option<&[f32]>, d: &ConvDims) -> Vec<f32> {
    let (h, wd) = (d.spatial[0], d.spatial[1]);
    let (kh, kw) = (d.kernel[0], d.kernel[1]);
    let (sh, sw) = (d.strides[0].max(1), d.strides[1].max(1));
    let (dh, dw) = (d.dilations[0], d.dilations[1]);
    let (ph, pw) = (d.pad_begin[0] as isize, d.pad_begin[1] as isize);
    let (oh, ow) = (d.out[0], d.out[1]);
    let mult = d.m / d.group;
    let plane_out = oh * ow;
    let plane_in = h * wd;
    let mut out = vec![0f32; d.n * d.m * plane_out];
    if plane_out == 0 {
        return out;
    }
    // the columns each kernel column reaches, the same for every row
    let cols: Vec<(usize, usize, isize)> = (0..kw)
        .map(|kx| {
            let off = (kx * dw) as isize - pw;
            let (lo, hi) = inside(off, sw, wd, ow);
            (lo, hi, off)
        })
        .collect();
    let plane = |idx: usize, o: &mut [f32]| {
        let (ni, oc) = (idx / d.m, idx % d.m);
        let ic = oc / mult;
        let xp = &x[(ni * d.c + ic) * plane_in..][..plane_in];
        let wp = &w[oc * kh * kw..][..kh * kw];
        o.fill(bias.map_or(0.0, |b| b[oc]));
        for (oy, orow) in o.chunks_exact_mut(ow).enumerate() {
            for ky in 0..kh {
                let iy = (oy * sh + ky * dh) as isize - ph;
                if iy < 0 || iy >= h as isize {
                    continue;
                }
                let xrow = &xp[iy as usize * wd..][..wd];
                for (kx, &(lo, hi, off)) in cols.iter().enumerate() {
                    let wv = wp[ky * kw + kx];
                    if lo >= hi {
                        continue;
                    }
                    let start = (lo * sw) as isize + off;
                    if sw == 1 {
                        let src = &xrow[start as usize..][..hi - lo];
                        for (o, &xv) in orow[lo..hi].iter_mut().zip(src) {
                            *o += wv * xv;
                        }
                    } else {
                        let src = xrow[start as usize..].iter().step_by(sw);
                        for (o, &xv) in orow[lo..hi].iter_mut().zip(src) {
                            *o += wv * xv;
                        }
                    }
                }
            }
        }
    };
    let planes = d.n * d.m;
    if rayon::current_num_threads() > 1 && planes >= 2 * PLANES_PER_TASK {
        use rayon::prelude::*;
        out.par_chunks_mut(plane_out * PLANES_PER_TASK)
            .enumerate()
            .for_each(|(t, chunk)| {
                for (j, o) in chunk.chunks_exact_mut(plane_out).enumerate() {
                    plane(t * PLANES_PER_TASK + j, o);
                }
            });
    } else {
        for (idx, o) in out.chunks_exact_mut(plane_out).enumerate() {
            plane(idx, o);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one output element at a time.
    fn reference(x: &[f32], w: &[f32], b: &[f32], d: &ConvDims) -> Vec<f32> {
        let (h, wd) = (d.spatial[0] as isize, d.spatial[1] as isize);
        let (kh, kw) = (d.kernel[0], d.kernel[1]);
        let mult = d.m / d.group;
        let mut out = vec![];
        for ni in 0..d.n {
            for oc in 0..d.m {
                let ic = oc / mult;
                for oy in 0..d.out[0] {
                    for ox in 0..d.out[1] {
                        let mut s = b[oc] as f64;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * d.strides[0] + ky * d.dilations[0]) as isize
                                    - d.pad_begin[0] as isize;
                                let ix = (ox * d.strides[1] + kx * d.dilations[1]) as isize
                                    - d.pad_begin[1] as isize;
                                if iy < 0 || ix < 0 || iy >= h || ix >= wd {
                                    continue;
                                }
                                let xv = x
                                    [(ni * d.c + ic) * (h * wd) as usize + (iy * wd + ix) as usize];
                                s += (w[oc * kh * kw + ky * kw + kx] * xv) as f64;
                            }
                        }
                        out.push(s as f32);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn matches_the_definition_for_strides_pads_dilations_and_multipliers() {
        // (n, c, mult, h, w, k, stride, dilation, pad begin, pad end)
        let cases = [
            (1, 3, 1, 7, 9, 3, 1, 1, 1, 1),
            (2, 4, 1, 8, 8, 3, 2, 1, 1, 1),
            (1, 2, 2, 10, 7, 5, 2, 1, 2, 2),
            (1, 3, 1, 9, 9, 3, 1, 2, 2, 2),
            (1, 2, 3, 5, 6, 3, 3, 1, 0, 2),
            (1, 2, 1, 4, 4, 5, 1, 1, 0, 4),
            (1, 8, 1, 12, 13, 3, 2, 1, 0, 1),
        ];
        for (n, c, mult, h, wd, k, s, dl, pb, pe) in cases {
            let m = c * mult;
            let oh = (h + pb + pe - (k - 1) * dl - 1) / s + 1;
            let ow = (wd + pb + pe - (k - 1) * dl - 1) / s + 1;
            let x: Vec<f32> = (0..n * c * h * wd)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..m * k * k)
                .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
                .collect();
            let b: Vec<f32> = (0..m).map(|i| i as f32 * 0.5 - 1.0).collect();
            let (sp, kk, st, di, pad, out) =
                ([h, wd], [k, k], [s, s], [dl, dl], [pb, pb], [oh, ow]);
            let d = ConvDims {
                n,
                c,
                m,
                group: c,
                spatial: &sp,
                kernel: &kk,
                strides: &st,
                dilations: &di,
                pad_begin: &pad,
                out: &out,
            };
            assert!(applies(&d));
            let got = conv(&x, &w, Some(&b), &d);
            let want = reference(&x, &w, &b, &d);
            assert_eq!(got.len(), want.len());
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - e).abs() <= 1e-4 * e.abs().max(1.0),
                    "case {:?} element {i}: {g} vs {e}",
                    (n, c, mult, h, wd, k, s, dl, pb, pe)
                );
            }
        }
    }
}
