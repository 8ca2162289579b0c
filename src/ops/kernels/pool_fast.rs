//! Fast path for the common pooling case: f32, NCHW, 2-D windows without
//! dilation. One plane per task (rayon), no per-element index arithmetic
//! beyond the window bounds. The general N-D path lives in `nn.rs`.

use rayon::prelude::*;

/// The geometry of a 2-D pooling window.
#[derive(Clone, Copy, Debug)]
pub struct Pool2d {
    pub h: usize,
    pub w: usize,
    pub kernel: [usize; 2],
    pub strides: [usize; 2],
    pub pad_begin: [usize; 2],
    pub pad_end: [usize; 2],
    pub out: [usize; 2],
}

/// What the window computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool2dKind {
    Max,
    /// Average; with `include_pad` the divisor counts padded positions too.
    Avg {
        include_pad: bool,
    },
}

/// Pools `planes` planes of `g.h × g.w` f32 values.
pub fn pool2d_f32(x: &[f32], planes: usize, g: &Pool2d, kind: Pool2dKind) -> Vec<f32> {
    let (oh, ow) = (g.out[0], g.out[1]);
    let mut y = vec![0f32; planes * oh * ow];
    if oh == 0 || ow == 0 {
        return y;
    }
    let plane_in = g.h * g.w;
    y.par_chunks_mut(oh * ow)
        .zip(x.par_chunks(plane_in.max(1)))
        .for_each(|(yp, xp)| plane(xp, yp, g, kind));
    y
}

fn plane(xp: &[f32], yp: &mut [f32], g: &Pool2d, kind: Pool2dKind) {
    let (h, w) = (g.h as isize, g.w as isize);
    let (kh, kw) = (g.kernel[0] as isize, g.kernel[1] as isize);
    let (pt, pl) = (g.pad_begin[0] as isize, g.pad_begin[1] as isize);
    let (hp, wp) = (h + g.pad_end[0] as isize, w + g.pad_end[1] as isize);
    for oy in 0..g.out[0] {
        let y0 = oy as isize * g.strides[0] as isize - pt;
        let (ya, yb) = (y0.max(0), (y0 + kh).min(h));
        let rows_padded = (y0 + kh).min(hp) - y0.max(-pt);
        for ox in 0..g.out[1] {
            let x0 = ox as isize * g.strides[1] as isize - pl;
            let (xa, xb) = (x0.max(0), (x0 + kw).min(w));
            let v = match kind {
                Pool2dKind::Max => {
                    let mut m = f32::NEG_INFINITY;
                    for yy in ya..yb {
                        let row = &xp[(yy * w) as usize..((yy + 1) * w) as usize];
                        for &v in &row[xa as usize..xb.max(xa) as usize] {
                            if v > m || v.is_nan() {
                                m = v;
                            }
                        }
                    }
                    m
                }
                Pool2dKind::Avg { include_pad } => {
                    let mut s = 0f32;
                    for yy in ya..yb {
                        let row = &xp[(yy * w) as usize..((yy + 1) * w) as usize];
                        s += row[xa as usize..xb.max(xa) as usize].iter().sum::<f32>();
                    }
                    let n = if include_pad {
                        let cols_padded = (x0 + kw).min(wp) - x0.max(-pl);
                        rows_padded.max(0) * cols_padded.max(0)
                    } else {
                        (yb - ya).max(0) * (xb - xa).max(0)
                    };
                    if n == 0 {
                        0.0
                    } else {
                        s / n as f32
                    }
                }
            };
            yp[oy * g.out[1] + ox] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_and_average_with_padding() {
        // 3x3 plane 1..9, 2x2 windows, stride 1, pad 1 at the end
        let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
        let g = Pool2d {
            h: 3,
            w: 3,
            kernel: [2, 2],
            strides: [2, 2],
            pad_begin: [0, 0],
            pad_end: [1, 1],
            out: [2, 2],
        };
        assert_eq!(pool2d_f32(&x, 1, &g, Pool2dKind::Max), vec![5., 6., 8., 9.]);
        assert_eq!(
            pool2d_f32(&x, 1, &g, Pool2dKind::Avg { include_pad: false }),
            vec![3., 4.5, 7.5, 9.]
        );
        assert_eq!(
            pool2d_f32(&x, 1, &g, Pool2dKind::Avg { include_pad: true }),
            vec![3., 2.25, 3.75, 2.25]
        );
    }
}
