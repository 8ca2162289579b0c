//! Rules for the recurrent networks: RNN, GRU, LSTM.

use crate::expr::Expr;
use crate::ops::{InferCtx, ShapeError};
use crate::value_type::Dim;

fn recurrent(cx: &mut InferCtx, gates: i64, n_out: usize) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let nd: i64 = match cx.attrs.string_or("direction", "forward").as_str() {
        "bidirectional" => 2,
        "forward" | "reverse" => 1,
        other => return Err(ShapeError(format!("unknown direction '{other}'"))),
    };
    let layout = cx.attrs.int_or("layout", 0);
    let hidden: Dim = match cx.attrs.int("hidden_size") {
        Some(h) => Some(Expr::int(h)),
        None => cx
            .shape(2)
            .and_then(|s| s.get(2).cloned().flatten())
            .or_else(|| {
                cx.shape(1)
                    .and_then(|s| s.get(1).cloned().flatten())
                    .map(|e| e.floor_div(&Expr::int(gates)))
            }),
    };
    let x = cx.shape(0).map(|s| s.to_vec());
    if let Some(x) = &x {
        if x.len() != 3 {
            return Err(ShapeError(format!("X must have rank 3, got {}", x.len())));
        }
    }
    let (seq, batch): (Dim, Dim) = match &x {
        Some(x) if layout == 0 => (x[0].clone(), x[1].clone()),
        Some(x) => (x[1].clone(), x[0].clone()),
        None => (None, None),
    };
    let nd = Some(Expr::int(nd));
    let (y, st) = if layout == 0 {
        (
            vec![seq, nd.clone(), batch.clone(), hidden.clone()],
            vec![nd, batch, hidden],
        )
    } else {
        (
            vec![batch.clone(), seq, nd.clone(), hidden.clone()],
            vec![batch, nd, hidden],
        )
    };
    cx.set_tensor(0, elem, Some(y));
    for i in 1..n_out {
        cx.set_tensor(i, elem, Some(st.clone()));
    }
    Ok(())
}

pub fn rnn(cx: &mut InferCtx) -> Result<(), ShapeError> {
    recurrent(cx, 1, 2)
}

pub fn gru(cx: &mut InferCtx) -> Result<(), ShapeError> {
    recurrent(cx, 3, 2)
}

pub fn lstm(cx: &mut InferCtx) -> Result<(), ShapeError> {
    recurrent(cx, 4, 3)
}
