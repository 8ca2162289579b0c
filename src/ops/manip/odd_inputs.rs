//! Robustness: odd inputs (empty, scalar, huge or negative values, wrong
//! types) to the kernels of [`crate::ops::ODD_INPUT_OPS`] (this family and the
//! reductions) give errors, never panics.

use crate::ops::test_kernel::{int, run, string};
use crate::tensor::Tensor;

use crate::ops::ODD_INPUT_OPS as MINE;

/// Odd inputs (empty, scalar, huge or negative values, wrong types)
/// must give errors, never panics.
#[test]
fn odd_inputs_never_panic() {
    let pool: Vec<Option<Tensor>> = vec![
        None,
        Some(Tensor::scalar(3i64)),
        Some(Tensor::from_vec::<i64>(&[0], vec![]).unwrap()),
        Some(Tensor::from_vec(&[3], vec![-5i64, 100, i64::MAX]).unwrap()),
        Some(Tensor::from_vec(&[2], vec![i64::MIN, -1i64]).unwrap()),
        Some(Tensor::from_vec(&[2, 3], vec![1f32, -2., 0., f32::NAN, 5., 6.]).unwrap()),
        Some(Tensor::from_vec(&[1, 2, 0], vec![0i32; 0]).unwrap()),
        Some(Tensor::from_vec(&[2, 1], vec![true, false]).unwrap()),
        Some(Tensor::from_vec(&[1, 4, 2, 2], (0..16).map(|v| v as f32).collect()).unwrap()),
    ];
    let ops: Vec<(&str, crate::ops::kernel::KernelBuilder)> = crate::ops::all()
        .filter(|d| d.domain.is_empty() && MINE.contains(&d.op_type))
        .map(|d| (d.op_type, d.kernel))
        .collect();
    assert!(ops.len() > 40, "{} ops", ops.len());
    let mut ran = 0usize;
    let attr_sets = [
        vec![],
        vec![int("axis", 1)],
        vec![int("axis", -7)],
        vec![string("mode", "reflect")],
        vec![int("blocksize", 2), string("mode", "CRD")],
        vec![int("batch_dims", 1)],
        vec![int("keepdims", 0), int("select_last_index", 1)],
        vec![string("reduction", "max")],
    ];
    for (name, b) in ops {
        for (opset, attrs) in [9, 13, 18]
            .into_iter()
            .flat_map(|o| attr_sets.iter().map(move |a| (o, a)))
        {
            for a in &pool {
                for c in &pool {
                    for e in pool.iter().take(5) {
                        let ins = vec![a.clone(), c.clone(), e.clone()];
                        let r = std::panic::catch_unwind(|| {
                            run(b, opset, attrs.clone(), ins.clone(), 2)
                        });

                        match r {
                            Ok(Ok(_)) => ran += 1,
                            Ok(Err(_)) => {}
                            Err(_) => panic!("{name} (opset {opset}) panicked on {ins:?}"),
                        }
                    }
                }
            }
        }
    }
    assert!(ran > 1000, "only {ran} successful runs");
}
