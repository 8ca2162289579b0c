//! `Einsum`: the equation parsed once ([`super::einsum_equation`]), then
//! summed over the contracted labels.

use super::einsum_equation::{einsum_parse, EinsumSpec};
use crate::bail;
use crate::dispatch_num;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::Num;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{Tensor, Value};
use crate::value_type::Dim;
use ndarray::ArrayD;

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let elem = cx.elem_req(0)?;
    let eq = cx
        .attrs
        .string("equation")
        .ok_or_else(|| ShapeError::new("Einsum needs an equation"))?;
    let mut shapes = vec![];
    for i in 0..cx.num_inputs() {
        match cx.shape(i) {
            Some(s) => shapes.push(s.to_vec()),
            None => {
                cx.set_tensor(0, elem, None);
                return Ok(());
            }
        }
    }
    let ranks: Vec<usize> = shapes.iter().map(|s| s.len()).collect();
    let spec = einsum_parse(&eq, &ranks).map_err(ShapeError::new)?;
    let mut out = vec![];
    for &c in &spec.output {
        // the size of a label: a non-1 occurrence wins (ellipsis broadcast)
        let mut dim: Dim = Some(Expr::int(1));
        let mut first = true;
        for (l, s) in spec.inputs.iter().zip(&shapes) {
            for (&lc, d) in l.iter().zip(s) {
                if lc == c && (first || dim.as_ref().and_then(|e| e.as_int()) == Some(1)) {
                    dim = d.clone();
                    first = false;
                }
            }
        }
        out.push(dim);
    }
    cx.set_tensor(0, elem, Some(out));
    Ok(())
}

fn einsum_typed<T: Num>(spec: &EinsumSpec, ts: &[&Tensor]) -> Result<Tensor, KernelError> {
    let arrays: Vec<ndarray::CowArray<T, ndarray::IxDyn>> = ts
        .iter()
        .map(|t| {
            crate::ops::kernels::typed::<T>(t, "Einsum operand").map(|a| a.as_standard_layout())
        })
        .collect::<Result<_, _>>()?;
    // all labels: output first, then summed ones
    let mut labels = spec.output.clone();
    for l in &spec.inputs {
        for &c in l {
            if !labels.contains(&c) {
                labels.push(c);
            }
        }
    }
    let mut size = vec![1usize; labels.len()];
    let mut seen = vec![false; labels.len()];
    for (l, a) in spec.inputs.iter().zip(&arrays) {
        for (&c, &d) in l.iter().zip(a.shape()) {
            let i = labels.iter().position(|&x| x == c).unwrap_or(0);
            if !seen[i] || size[i] == 1 {
                size[i] = d;
                seen[i] = true;
            } else if d != size[i] && !(d == 1 && c < b'A') {
                bail!("Einsum label '{}' has sizes {} and {d}", c as char, size[i]);
            }
        }
    }
    // strides of each operand per label (repeated labels add: diagonals)
    let strides: Vec<Vec<usize>> = spec
        .inputs
        .iter()
        .zip(&arrays)
        .map(|(l, a)| {
            let mut st = vec![0usize; labels.len()];
            let sh = a.shape();
            let mut s = 1usize;
            for j in (0..l.len()).rev() {
                let i = labels.iter().position(|&x| x == l[j]).unwrap_or(0);
                if sh[j] != 1 || size[i] == 1 {
                    st[i] += s;
                }
                s *= sh[j];
            }
            st
        })
        .collect();
    let nout = spec.output.len();
    let osize = crate::ops::kernels::checked_size(&size[..nout])?;
    let rsize = crate::ops::kernels::checked_size(&size[nout..])?;
    if osize.checked_mul(rsize).is_none_or(|v| v > 1 << 36) {
        bail!("Einsum would take {osize} x {rsize} steps, which is too many");
    }
    let datas: Vec<&[T]> = arrays
        .iter()
        .map(|a| {
            a.as_slice()
                .ok_or_else(|| KernelError::new("internal: non-contiguous"))
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(osize);
    let mut oi = vec![0usize; nout];
    let rdims = size[nout..].to_vec();
    let mut ri = vec![0usize; rdims.len()];
    for _ in 0..osize {
        let base: Vec<usize> = strides
            .iter()
            .map(|st| oi.iter().zip(st).map(|(i, s)| i * s).sum())
            .collect();
        let mut acc = T::zero();
        ri.iter_mut().for_each(|v| *v = 0);
        for _ in 0..rsize {
            let mut prod = T::one();
            for (k, st) in strides.iter().enumerate() {
                let off: usize = base[k]
                    + ri.iter()
                        .zip(&st[nout..])
                        .map(|(i, s)| i * s)
                        .sum::<usize>();
                prod = prod.mul(datas[k][off]);
            }
            acc = acc.add(prod);
            crate::ops::kernels::sliding_window::next_index(&mut ri, &rdims);
        }
        out.push(acc);
        crate::ops::kernels::sliding_window::next_index(&mut oi, &size[..nout]);
    }
    Ok(T::wrap(ArrayD::from_shape_vec(
        ndarray::IxDyn(&size[..nout]),
        out,
    )?))
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let eq = info
        .attrs
        .string("equation")
        .ok_or_else(|| KernelError::new("Einsum needs an equation"))?;
    Ok(Box::new(move |_, ins| {
        let ts: Vec<&Tensor> = (0..ins.len())
            .map(|i| tensor_in(ins, i))
            .collect::<Result<_, _>>()?;
        if ts.is_empty() {
            bail!("Einsum needs at least one input");
        }
        if ts.iter().any(|t| t.dtype() != ts[0].dtype()) {
            bail!("Einsum operands must have one element type");
        }
        let ranks: Vec<usize> = ts.iter().map(|t| t.rank()).collect();
        let spec = einsum_parse(&eq, &ranks).map_err(KernelError::new)?;
        let a = ts[0];
        let y = dispatch_num!(
            a,
            einsum_typed(&spec, &ts),
            bail!("Einsum does not accept {}", a.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(eq: &str, ts: &[Tensor]) -> Tensor {
        let refs: Vec<&Tensor> = ts.iter().collect();
        let ranks: Vec<usize> = ts.iter().map(|t| t.rank()).collect();
        let spec = einsum_parse(eq, &ranks).unwrap();
        einsum_typed::<i64>(&spec, &refs).unwrap()
    }

    #[test]
    fn einsum_forms() {
        let a = Tensor::from_vec(&[2, 3], (1..=6).collect::<Vec<i64>>()).unwrap();
        let b = Tensor::from_vec(&[3, 2], (1..=6).collect::<Vec<i64>>()).unwrap();
        let mm = run("ij,jk", &[a.clone(), b.clone()]);
        assert_eq!(mm.to_i64_vec().unwrap(), vec![22, 28, 49, 64]);
        let t = run("ij->ji", std::slice::from_ref(&a));
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.to_i64_vec().unwrap(), vec![1, 4, 2, 5, 3, 6]);
        let sq = Tensor::from_vec(&[2, 2], vec![1i64, 2, 3, 4]).unwrap();
        assert_eq!(
            run("ii", std::slice::from_ref(&sq)).to_i64_vec().unwrap(),
            vec![5]
        );
        assert_eq!(run("ii->i", &[sq]).to_i64_vec().unwrap(), vec![1, 4]);
        let e = run("...j->...", &[a]);
        assert_eq!(e.to_i64_vec().unwrap(), vec![6, 15]);
        assert!(einsum_parse("ij,jk", &[2]).is_err());
        assert!(einsum_parse("ij->k", &[2]).is_err());
    }
}
