//! Transposes that swap two blocks of axes (`[1, 0]`, `[0, 2, 1]`,
//! `[0, 2, 3, 1]`, and with kept trailing axes `[0, 2, 1, 3]` …) as batched
//! 2-D transposes: in cache-sized tiles, or whole rows of the kept axes. A
//! generic strided walk touches a new cache line for almost every element
//! written; a 32 x 32 tile reads and writes whole lines.

use ndarray::{ArrayD, IxDyn};

/// Tile edge in elements.
const TILE: usize = 32;

/// The shape of a transpose that swaps two runs of axes between a kept
/// prefix and a kept suffix: `[b.., r.., c.., i..] -> [b.., c.., r.., i..]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSwap {
    /// Product of the kept leading axes.
    pub batch: usize,
    /// Product of the first swapped run (they become the columns).
    pub rows: usize,
    /// Product of the second swapped run.
    pub cols: usize,
    /// Product of the kept trailing axes: each moved element is a
    /// contiguous block of `inner` values.
    pub inner: usize,
}

/// The [`BlockSwap`] `perm` performs on `shape`, if it is one (`[1, 0]`,
/// `[0, 2, 1]`, `[0, 2, 3, 1]`, `[0, 2, 1, 3]` …).
pub fn as_block_swap(shape: &[usize], perm: &[usize]) -> Option<BlockSwap> {
    let r = shape.len();
    if perm.len() != r {
        return None;
    }
    let p = perm
        .iter()
        .enumerate()
        .take_while(|&(i, &a)| i == a)
        .count();
    if p == r {
        return None;
    }
    let s = perm
        .iter()
        .enumerate()
        .rev()
        .take_while(|&(i, &a)| i == a)
        .count();
    let e = r - s;
    // between the kept runs, perm is q..e followed by p..q
    let q = perm[p];
    if q <= p || q >= e {
        return None;
    }
    let middle: Vec<usize> = (q..e).chain(p..q).collect();
    if perm[p..e] != middle[..] {
        return None;
    }
    let prod = |d: &[usize]| d.iter().product::<usize>();
    Some(BlockSwap {
        batch: prod(&shape[..p]),
        rows: prod(&shape[p..q]),
        cols: prod(&shape[q..e]),
        inner: prod(&shape[e..]),
    })
}

/// Blocks of at least this many elements are copied whole; smaller ones
/// go through the tiled element walk.
const WHOLE_BLOCK: usize = 8;

/// The transpose `swap` describes, of a standard-layout `src`:
/// `out[b][c][r][i] = src[b][r][c][i]`.
pub fn transpose<T: Clone>(src: &[T], swap: BlockSwap, out_shape: &[usize]) -> Option<ArrayD<T>> {
    let BlockSwap {
        batch,
        rows,
        cols,
        inner,
    } = swap;
    let plane = rows * cols * inner;
    if src.len() != batch * plane {
        return None;
    }
    let Some(first) = src.first() else {
        return ArrayD::from_shape_vec(IxDyn(out_shape), Vec::new()).ok();
    };
    let mut out: Vec<T> = vec![first.clone(); src.len()];
    for (s, o) in src.chunks_exact(plane).zip(out.chunks_exact_mut(plane)) {
        if inner >= WHOLE_BLOCK {
            // each element is a run of `inner` contiguous values
            for c in 0..cols {
                for r in 0..rows {
                    let from = (r * cols + c) * inner;
                    let to = (c * rows + r) * inner;
                    o[to..to + inner].clone_from_slice(&s[from..from + inner]);
                }
            }
            continue;
        }
        if inner == 1 {
            // one TILE x TILE block at a time, written along its output
            // rows (contiguous), read from the tile's columns (in L1)
            for r0 in (0..rows).step_by(TILE) {
                let r1 = (r0 + TILE).min(rows);
                for c0 in (0..cols).step_by(TILE) {
                    let c1 = (c0 + TILE).min(cols);
                    for c in c0..c1 {
                        let dst = &mut o[c * rows + r0..c * rows + r1];
                        for (d, v) in dst.iter_mut().zip(s[r0 * cols + c..].iter().step_by(cols)) {
                            *d = v.clone();
                        }
                    }
                }
            }
            continue;
        }
        // one TILE x TILE block at a time: its reads and writes stay in L1
        for r0 in (0..rows).step_by(TILE) {
            let r1 = (r0 + TILE).min(rows);
            for c0 in (0..cols).step_by(TILE) {
                let c1 = (c0 + TILE).min(cols);
                for r in r0..r1 {
                    let row = &s[(r * cols + c0) * inner..(r * cols + c1) * inner];
                    for (k, v) in row.chunks_exact(inner).enumerate() {
                        let to = ((c0 + k) * rows + r) * inner;
                        o[to..to + inner].clone_from_slice(v);
                    }
                }
            }
        }
    }
    ArrayD::from_shape_vec(IxDyn(out_shape), out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_block_swaps_only() {
        let swap = |batch, rows, cols, inner| {
            Some(BlockSwap {
                batch,
                rows,
                cols,
                inner,
            })
        };
        assert_eq!(as_block_swap(&[3, 5], &[1, 0]), swap(1, 3, 5, 1));
        assert_eq!(as_block_swap(&[2, 3, 5], &[0, 2, 1]), swap(2, 3, 5, 1));
        assert_eq!(
            as_block_swap(&[2, 3, 4, 5], &[0, 2, 3, 1]),
            swap(2, 3, 20, 1)
        );
        assert_eq!(
            as_block_swap(&[2, 3, 4, 5], &[0, 3, 1, 2]),
            swap(2, 12, 5, 1)
        );
        assert_eq!(
            as_block_swap(&[2, 3, 4, 5], &[0, 2, 1, 3]),
            swap(2, 3, 4, 5)
        );
        assert_eq!(
            as_block_swap(&[2, 3, 4, 5], &[1, 0, 2, 3]),
            swap(1, 2, 3, 20)
        );
        assert_eq!(as_block_swap(&[2, 3, 4], &[0, 1, 2]), None);
        assert_eq!(as_block_swap(&[2, 3, 4], &[2, 1, 0]), None);
        assert_eq!(as_block_swap(&[2, 3, 4, 5], &[0, 3, 2, 1]), None);
    }

    #[test]
    fn agrees_with_a_strided_walk() {
        for (shape, perm) in [
            (vec![37, 70], vec![1, 0]),
            (vec![3, 33, 65], vec![0, 2, 1]),
            (vec![2, 5, 7, 40], vec![0, 2, 3, 1]),
            (vec![1, 1], vec![1, 0]),
            (vec![0, 4], vec![1, 0]),
            (vec![1, 9, 4, 64], vec![0, 2, 1, 3]),
            (vec![2, 35, 33, 3], vec![0, 2, 1, 3]),
            (vec![3, 4, 2, 5, 16], vec![0, 3, 1, 2, 4]),
        ] {
            let n: usize = shape.iter().product();
            let a = ArrayD::from_shape_vec(IxDyn(&shape), (0..n as i64).collect()).unwrap();
            let want = a
                .view()
                .permuted_axes(IxDyn(&perm))
                .as_standard_layout()
                .into_owned();
            let dims = as_block_swap(&shape, &perm).unwrap();
            let got = transpose(a.as_slice().unwrap(), dims, want.shape()).unwrap();
            assert_eq!(got, want, "{shape:?} {perm:?}");
        }
    }
}
