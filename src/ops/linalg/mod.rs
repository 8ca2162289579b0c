//! Linear algebra: MatMul, Gemm, the quantised products, Einsum, Det.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`product_shape`] holds the matmul output shapes,
//! [`quantized_operands`] the zero-point shifts of the quantised products,
//! [`einsum_equation`] the Einsum parser; the GEMM engine they run on
//! (shared with the convolutions) is `kernels/matrix_product.rs`.

mod det;
mod einsum;
pub mod einsum_equation;
mod gemm;
mod matmul;
mod matmul_integer;
mod product_shape;
mod qlinear_matmul;
mod quantized_operands;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "MatMul", 1, matmul),
    op_def!("", "Gemm", 1, gemm),
    op_def!("", "MatMulInteger", 10, matmul_integer),
    op_def!("", "QLinearMatMul", 10, qlinear_matmul),
    op_def!("", "Einsum", 12, einsum),
    op_def!("", "Det", 11, det),
];
