//! Matrix products.

use super::OpDef;
use crate::ops::kernels::linalg as k;
use crate::ops::shape_rules::linalg as s;

pub const TABLE: &[OpDef] = &[
    OpDef {
        domain: "",
        op_type: "MatMul",
        since: 1,
        shape: s::matmul,
        kernel: k::matmul,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "Gemm",
        since: 1,
        shape: s::gemm,
        kernel: k::gemm,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "MatMulInteger",
        since: 1,
        shape: s::matmul_integer,
        kernel: k::matmul_integer,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "QLinearMatMul",
        since: 1,
        shape: s::qlinear_matmul,
        kernel: k::qlinear_matmul,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "Einsum",
        since: 1,
        shape: s::einsum,
        kernel: k::einsum,
        deterministic: true,
    },
    OpDef {
        domain: "",
        op_type: "Det",
        since: 1,
        shape: crate::ops::shape_rules::det::det,
        kernel: crate::ops::kernels::det::det_op,
        deterministic: true,
    },
];
