//! `TfIdfVectorizer`: n-gram counts (TF, IDF or TFIDF weighted) of
//! integer or string sequences into a fixed output vector.

use crate::bail;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::f64_values::float_of;
use crate::ops::shape_rules::{int_dim, shape_of};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Key, Value};
use std::collections::HashMap;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let n = cx
        .attrs
        .ints("ngram_indexes")
        .map(|v| v.iter().copied().max().unwrap_or(-1) + 1);
    let x = shape_of(cx, 0);
    let out = x.map(|s| {
        let mut o = if s.len() == 2 {
            vec![s[0].clone()]
        } else {
            vec![]
        };
        o.push(n.and_then(int_dim));
        o
    });
    cx.set_tensor(0, DataType::Float, out);
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = &info.attrs;
    let min_n = a
        .int("min_gram_length")
        .ok_or_else(|| KernelError::new("min_gram_length is missing"))?;
    let max_n = a
        .int("max_gram_length")
        .ok_or_else(|| KernelError::new("max_gram_length is missing"))?;
    let max_skip = a
        .int("max_skip_count")
        .ok_or_else(|| KernelError::new("max_skip_count is missing"))?;
    if min_n < 1 || max_n < min_n || max_skip < 0 {
        bail!("invalid gram lengths {min_n}..{max_n} or skip count {max_skip}");
    }
    let mode = a
        .string("mode")
        .ok_or_else(|| KernelError::new("mode is missing"))?;
    if !matches!(mode.as_str(), "TF" | "IDF" | "TFIDF") {
        bail!("unknown mode '{mode}'");
    }
    let counts = a
        .ints("ngram_counts")
        .ok_or_else(|| KernelError::new("ngram_counts is missing"))?;
    let indexes = a
        .ints("ngram_indexes")
        .ok_or_else(|| KernelError::new("ngram_indexes is missing"))?;
    let pool: Vec<Key> = if let Some(p) = a.ints("pool_int64s") {
        p.into_iter().map(Key::Int).collect()
    } else if let Some(p) = a.strings("pool_strings") {
        p.into_iter().map(Key::Str).collect()
    } else {
        bail!("TfIdfVectorizer needs pool_int64s or pool_strings");
    };
    let weights = a.floats("weights");
    // Map each n-gram (a token list) to its output column.
    let mut table: HashMap<Vec<Key>, usize> = HashMap::new();
    let mut gram = 0usize;
    for (li, &start) in counts.iter().enumerate() {
        let n = li + 1;
        let end = counts.get(li + 1).copied().unwrap_or(pool.len() as i64);
        if start < 0 || end < start || end as usize > pool.len() {
            bail!(
                "ngram_counts {counts:?} do not fit a pool of {}",
                pool.len()
            );
        }
        let seg = &pool[start as usize..end as usize];
        if !seg.len().is_multiple_of(n) {
            bail!("the {n}-gram pool segment has {} tokens", seg.len());
        }
        for g in seg.chunks(n) {
            let Some(&col) = indexes.get(gram) else {
                bail!("ngram_indexes has fewer entries than the pool has n-grams");
            };
            if col < 0 {
                bail!("negative ngram index {col}");
            }
            table.insert(g.to_vec(), col as usize);
            gram += 1;
        }
    }
    let width = indexes.iter().copied().max().map_or(0, |m| m as usize + 1);
    if let Some(w) = &weights {
        if w.len() < gram {
            bail!("weights has {} entries for {gram} n-grams", w.len());
        }
    }
    let col_weight: HashMap<usize, f64> = match &weights {
        Some(w) => indexes
            .iter()
            .zip(w)
            .map(|(&c, &v)| (c as usize, v as f64))
            .collect(),
        None => HashMap::new(),
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        if !matches!(
            x.dtype(),
            DataType::String | DataType::Int32 | DataType::Int64
        ) {
            bail!("X must be string, int32 or int64, got {}", x.dtype());
        }
        let toks = Key::all_of(x, "keys")?;
        let (rows, len, out_shape) = match x.shape() {
            [c] => (1, *c, vec![width]),
            [n, c] => (*n, *c, vec![*n, width]),
            s => bail!("X must be 1-D or 2-D, got shape {s:?}"),
        };
        let mut out = vec![0.0; rows * width];
        for r in 0..rows {
            let row = &toks[r * len..(r + 1) * len];
            for n in min_n as usize..=max_n as usize {
                let skips = if n == 1 { 0 } else { max_skip as usize };
                for i in 0..len {
                    for s in 0..=skips {
                        let stride = s + 1;
                        let last = i + (n - 1) * stride;
                        if last >= len {
                            break;
                        }
                        let g: Vec<Key> = (0..n).map(|k| row[i + k * stride].clone()).collect();
                        if let Some(&c) = table.get(&g) {
                            out[r * width + c] += 1.0;
                        }
                    }
                }
            }
        }
        for (k, v) in out.iter_mut().enumerate() {
            let w = col_weight.get(&(k % width.max(1))).copied().unwrap_or(1.0);
            *v = match mode.as_str() {
                "TF" => *v,
                "IDF" => {
                    if *v > 0.0 {
                        w
                    } else {
                        0.0
                    }
                }
                _ => *v * w,
            };
        }
        Ok(vec![Value::Tensor(float_of(
            DataType::Float,
            &out_shape,
            out,
        )?)])
    }))
}
