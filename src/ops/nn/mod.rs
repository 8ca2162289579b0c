//! Neural-network operators: the softmax family, convolutions, pooling,
//! the normalisations and Dropout.
//!
//! One file per operator, except where operators differ in one function:
//! [`softmax_family`] (Softmax, LogSoftmax, Hardmax), [`pooling`] (MaxPool,
//! AveragePool, LpPool) and [`global_pooling`] hold a module per operator.
//! Shared code has a file named for it: [`window_shape`] (symbolic output
//! sizes of windowed operators), [`channel_stats`], [`float_input`],
//! [`quantized_conv`] and [`pool_2d_f32`] (the f32 NCHW pooling fast path).
//! The convolution engine (im2col + GEMM, the AVX-512 kernels, fused
//! epilogues) is shared with the plan's passes and lives in
//! [`crate::ops::kernels::conv`].

mod batch_normalization;
mod channel_stats;
mod col2im;
mod conv;
mod conv_integer;
mod conv_transpose;
mod deform_conv;
mod dropout;
mod float_input;
mod global_pooling;
mod group_normalization;
mod instance_normalization;
mod layer_normalization;
mod lp_normalization;
mod lrn;
mod max_unpool;
mod mean_variance_normalization;
mod pool_2d_f32;
mod pooling;
mod qlinear_conv;
mod quantized_conv;
mod softmax_family;
mod window_shape;

use super::OpDef;
use global_pooling::{global_average_pool, global_max_pool};
use pooling::{average_pool, lp_pool, max_pool};
use softmax_family::{hardmax, log_softmax, softmax};

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "Softmax", 1, softmax),
    op_def!("", "LogSoftmax", 1, log_softmax),
    op_def!("", "Hardmax", 1, hardmax),
    op_def!("", "Conv", 1, conv),
    op_def!("", "ConvInteger", 10, conv_integer),
    op_def!("", "ConvTranspose", 1, conv_transpose),
    op_def!("", "QLinearConv", 10, qlinear_conv),
    op_def!("", "DeformConv", 19, deform_conv),
    op_def!("", "MaxPool", 1, max_pool),
    op_def!("", "AveragePool", 1, average_pool),
    op_def!("", "LpPool", 1, lp_pool),
    op_def!("", "GlobalAveragePool", 1, global_average_pool),
    op_def!("", "GlobalMaxPool", 1, global_max_pool),
    op_def!("", "MaxUnpool", 9, max_unpool),
    op_def!("", "Col2Im", 18, col2im),
    op_def!("", "BatchNormalization", 1, batch_normalization),
    op_def!("", "InstanceNormalization", 1, instance_normalization),
    op_def!("", "LayerNormalization", 17, layer_normalization),
    op_def!("", "GroupNormalization", 18, group_normalization),
    op_def!("", "LRN", 1, lrn),
    op_def!("", "LpNormalization", 1, lp_normalization),
    op_def!("", "MeanVarianceNormalization", 9, mean_variance_normalization),
    op_def!("", "Dropout", 1, dropout, nondeterministic),
];

#[cfg(test)]
mod tests {
    use crate::ops::test_kernel::{int, run};
    use crate::tensor::Tensor;

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let x = Tensor::from_vec(&[2, 3], vec![0.0f32; 6]).unwrap();
        let one = |t: &Tensor| vec![Some(t.clone())];
        assert!(run(super::max_pool::kernel, 23, vec![], one(&x), 1).is_err());
        assert!(run(super::batch_normalization::kernel, 23, vec![], one(&x), 1).is_err());
        assert!(run(super::lrn::kernel, 23, vec![int("size", 0)], one(&x), 1).is_err());
        let w = Tensor::from_vec(&[1, 3, 1, 1], vec![1.0f32; 3]).unwrap();
        let x4 = Tensor::from_vec(&[1, 3, 1, 2], vec![0.0f32; 6]).unwrap();
        let conv = super::conv::kernel;
        let pair = |a: &Tensor, b: &Tensor| vec![Some(a.clone()), Some(b.clone())];
        assert!(run(conv, 23, vec![int("group", 2)], pair(&x4, &w), 1).is_err());
        assert!(run(conv, 23, vec![], pair(&x, &w), 1).is_err());
        assert!(run(conv, 23, vec![int("group", 0)], pair(&x4, &x4), 1).is_err());
    }
}
