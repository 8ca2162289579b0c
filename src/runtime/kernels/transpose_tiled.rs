//! Transposes that swap two blocks of axes (`[1, 0]`, `[0, 2, 1]`,
//! `[0, 2, 3, 1]`, …) as batched 2-D transposes in cache-sized tiles. A
//! generic strided walk touches a new cache line for almost every element
//! written; a 32 x 32 tile reads and writes whole lines.

use ndarray::{ArrayD, IxDyn};

/// Tile edge in elements.
const TILE: usize = 32;

/// `(batch, rows, cols)` when `perm` keeps a prefix of axes in place and
/// swaps the two runs of axes after it (`rows` = the first run's size).
pub fn as_batched_2d(shape: &[usize], perm: &[usize]) -> Option<(usize, usize, usize)> {
    let r = shape.len();
    let p = perm
        .iter()
        .enumerate()
        .take_while(|&(i, &a)| i == a)
        .count();
    if p == r {
        return None;
    }
    // after the prefix, perm is q..r followed by p..q
    let q = perm[p];
    let tail: Vec<usize> = (q..r).chain(p..q).collect();
    if q <= p || perm[p..] != tail[..] {
        return None;
    }
    let prod = |s: &[usize]| s.iter().product::<usize>();
    Some((prod(&shape[..p]), prod(&shape[p..q]), prod(&shape[q..])))
}

/// `out[b][c][r] = src[b][r][c]` for a standard-layout `src`.
pub fn transpose<T: Clone>(
    src: &[T],
    (batch, rows, cols): (usize, usize, usize),
    out_shape: &[usize],
) -> Option<ArrayD<T>> {
    let plane = rows * cols;
    if src.len() != batch * plane {
        return None;
    }
    let Some(first) = src.first() else {
        return ArrayD::from_shape_vec(IxDyn(out_shape), Vec::new()).ok();
    };
    let mut out: Vec<T> = vec![first.clone(); src.len()];
    for (s, o) in src.chunks_exact(plane).zip(out.chunks_exact_mut(plane)) {
        // one TILE x TILE block at a time: its reads and writes stay in L1
        for r0 in (0..rows).step_by(TILE) {
            let r1 = (r0 + TILE).min(rows);
            for c0 in (0..cols).step_by(TILE) {
                let c1 = (c0 + TILE).min(cols);
                for r in r0..r1 {
                    let row = &s[r * cols + c0..r * cols + c1];
                    for (k, v) in row.iter().enumerate() {
                        o[(c0 + k) * rows + r] = v.clone();
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
        assert_eq!(as_batched_2d(&[3, 5], &[1, 0]), Some((1, 3, 5)));
        assert_eq!(as_batched_2d(&[2, 3, 5], &[0, 2, 1]), Some((2, 3, 5)));
        assert_eq!(
            as_batched_2d(&[2, 3, 4, 5], &[0, 2, 3, 1]),
            Some((2, 3, 20))
        );
        assert_eq!(
            as_batched_2d(&[2, 3, 4, 5], &[0, 3, 1, 2]),
            Some((2, 12, 5))
        );
        assert_eq!(as_batched_2d(&[2, 3, 4], &[0, 1, 2]), None);
        assert_eq!(as_batched_2d(&[2, 3, 4], &[2, 1, 0]), None);
        assert_eq!(as_batched_2d(&[2, 3, 4, 5], &[0, 2, 1, 3]), None);
    }

    #[test]
    fn agrees_with_a_strided_walk() {
        for (shape, perm) in [
            (vec![37, 70], vec![1, 0]),
            (vec![3, 33, 65], vec![0, 2, 1]),
            (vec![2, 5, 7, 40], vec![0, 2, 3, 1]),
            (vec![1, 1], vec![1, 0]),
            (vec![0, 4], vec![1, 0]),
        ] {
            let n: usize = shape.iter().product();
            let a = ArrayD::from_shape_vec(IxDyn(&shape), (0..n as i64).collect()).unwrap();
            let want = a
                .view()
                .permuted_axes(IxDyn(&perm))
                .as_standard_layout()
                .into_owned();
            let dims = as_batched_2d(&shape, &perm).unwrap();
            let got = transpose(a.as_slice().unwrap(), dims, want.shape()).unwrap();
            assert_eq!(got, want, "{shape:?} {perm:?}");
        }
    }
}
