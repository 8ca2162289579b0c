//! Clip: the input bounded below and above; the bounds are the `min`/`max`
//! attributes before opset 11 and optional scalar inputs from 11 on.

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
    attr: (Option<f64>, Option<f64>),
) -> Result<Tensor, KernelError> {
    let a: &ArrayD<T> = typed(x, "input")?;
    let lo = match attr.0 {
        Some(v) => Some(T::from_f64(v)),
        None => clip_bound::<T>(lo, "min")?,
    };
    let hi = match attr.1 {
        Some(v) => Some(T::from_f64(v)),
        None => clip_bound::<T>(hi, "max")?,
    };
    Ok(T::wrap(a.mapv(|v| clip_value(v, lo, hi))))
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let attr = if info.opset < 11 {
        (
            Some(info.attrs.float_or("min", f32::MIN) as f64),
            Some(info.attrs.float_or("max", f32::MAX) as f64),
        )
    } else {
        (None, None)
    };
    Ok(Box::new(move |_, ins| {
        let x = tensor_in(ins, 0)?;
        let lo = opt_tensor_in(ins, 1)?;
        let hi = opt_tensor_in(ins, 2)?;
        let y = dispatch_num!(
            x,
            clip_t(x, lo, hi, attr),
            bail!("Clip does not accept {}", x.dtype())
        )?;
        Ok(vec![Value::Tensor(y)])
    }))
}

#[cfg(test)]
mod tests {

    use crate::ops::test_kernel::{run_op as run, tensor as t};
    use crate::proto::AttributeProto;

    #[test]
    fn clip_inputs_and_attributes() {
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
        let attr = AttributeProto {
            name: Some("max".into()),
            f: Some(0.5),
            r#type: Some(1),
            ..Default::default()
        };
        let y = run("Clip", vec![attr], 6, &[Some(t(&[2], vec![-1.0f32, 2.0]))]).unwrap();
        assert_eq!(y.to_f64_vec().unwrap(), vec![-1.0, 0.5]);
    }
}
