//! Clip: the input bounded below and above; the bounds are the `min`/`max`
//! optional scalar inputs (the attributes of opsets before 11 are moved to
//! inputs by `graph::upgrade`).

use crate::bail;
use crate::dispatch_num;
use crate::ops::kernel::{opt_tensor_in, tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::kernels::numeric::{clip_value, Num};
use crate::ops::kernels::typed;
use crate::tensor::{Tensor, Value};
use ndarray::ArrayD;

pub use super::value_rules::same_as_input as shape;

fn clip_bound<T: Num>(t: Option<&Tensor>, what: &str) -> Result<Option<T>, KernelError> {
    match t {
        None => Ok(None),
        Some(t) => {
            let a: &ArrayD<T> = typed(t, what)?;
            if a.len() != 1 {
                bail!("Clip: {what} must be a scalar, got shape {:?}", a.shape());
            }
            Ok(a.iter().next().copied())
        }
    }
}

fn clip_t<T: Num>(
    x: &Tensor,
    lo: Option<&Tensor>,
    hi: Option<&Tensor>,
) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "input")?;
    let lo = clip_bound::<T>(lo, "min")?;
    let hi = clip_bound::<T>(hi, "max")?;
    Ok(T::wrap(a.mapv(|v| clip_value(v, lo, hi))))
}

pub fn kernel(_: &NodeInfo) -> Result<Kernel, KernelError> {
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let lo = opt_tensor_in(ins, 1)?;
        let hi = opt_tensor_in(ins, 2)?;
        let y = dispatch_num!(
            x,
            clip_t(x, lo, hi),
            bail!("Clip does not accept {}", x.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {

    use crate::ops::test_kernel::{run_op as run, tensor as t};

    #[test]
    fn clip_inputs() {
        let x = t(&[3], vec![-5i8, 0, 9]);
        let lo = t(&[], vec![-2i8]);
        let y = run("Clip", vec![], 13, &[Some(x.clone()), Some(lo), None]).unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), vec![-2, 0, 9]);
        // min > max: everything becomes max
        let y = run(
            "Clip",
            vec![],
            13,
            &[Some(x), Some(t(&[], vec![3i8])), Some(t(&[], vec![1i8]))],
        )
        .unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), vec![1, 1, 1]);
    }
}
