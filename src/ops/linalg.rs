//! Matrix products.

use super::OpDef;
use crate::ops::kernels::linalg as k;
use crate::ops::shape_rules::linalg as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "MatMul",
        since: 1,
        shape: Some(s::matmul),
        kernel: Some(k::matmul),
    },
    OpDef {
        domain: "",
        op_type: "Gemm",
        since: 1,
        shape: Some(s::gemm),
        kernel: Some(k::gemm),
    },
    OpDef {
        domain: "",
        op_type: "MatMulInteger",
        since: 1,
        shape: Some(s::matmul_integer),
        kernel: Some(k::matmul_integer),
    },
    OpDef {
        domain: "",
        op_type: "QLinearMatMul",
        since: 1,
        shape: Some(s::qlinear_matmul),
        kernel: Some(k::qlinear_matmul),
    },
    OpDef {
        domain: "",
        op_type: "Einsum",
        since: 1,
        shape: Some(s::einsum),
        kernel: Some(k::einsum),
    },
    OpDef {
        domain: "",
        op_type: "Det",
        since: 1,
        shape: Some(crate::ops::shape_rules::det::det),
        kernel: Some(crate::ops::kernels::det::det_op),
    },
];
