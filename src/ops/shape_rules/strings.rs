//! Rules for the string operators: StringConcat, StringSplit,
//! RegexFullMatch, TfIdfVectorizer.

use super::{int_dim, shape_of};
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::DataType;

pub fn string_concat(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = match (cx.shape(0), cx.shape(1)) {
        (Some(a), Some(b)) => Some(super::broadcast(&[a, b])?),
        _ => None,
    };
    cx.set_tensor(0, DataType::String, s);
    Ok(())
}

pub fn string_split(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    let y = s.clone().map(|mut v| {
        v.push(None);
        v
    });
    cx.set_tensor(0, DataType::String, y);
    cx.set_tensor(1, DataType::Int64, s);
    Ok(())
}

pub fn regex_full_match(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let s = shape_of(cx, 0);
    cx.set_tensor(0, DataType::Bool, s);
    Ok(())
}

pub fn tfidf_vectorizer(cx: &mut InferCtx) -> Result<(), ShapeError> {
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
