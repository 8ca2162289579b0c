//! Elementwise operators: arithmetic, the unary maths and activations,
//! comparisons and logic, Where, the variadic Min/Max/Sum/Mean, Clip,
//! Identity, and the conversions (Cast, CastLike, BitCast, the quantizers).
//!
//! One file per operator, except where operators differ in one scalar
//! function and share everything else: [`arithmetic`] (Add, Sub, Mul, Div),
//! [`unary_math`] (the float functions without attributes),
//! [`numeric_unary`] (Abs, Neg, Sign), [`bitwise`], [`comparison`],
//! [`logical`] and [`variadic`] hold a module per operator. Shared code has
//! a file named for it: [`value_rules`] (the broadcast rule and data
//! propagation), [`float_map`] (unary float kernels), [`cast_values`] and
//! [`quantization`].

mod arithmetic;
mod bit_cast;
mod bitwise;
mod cast;
mod cast_like;
mod cast_values;
mod celu;
mod clip;
mod comparison;
mod dequantize_linear;
mod dynamic_quantize_linear;
mod elu;
mod float_map;
mod gelu;
mod hard_sigmoid;
mod hard_swish;
mod identity;
mod is_inf;
mod is_nan;
mod leaky_relu;
mod logical;
mod modulo;
mod numeric_unary;
mod pow;
mod prelu;
mod quantization;
mod quantize_linear;
mod relu;
mod selu;
mod shrink;
mod swish;
mod thresholded_relu;
mod unary_math;
mod value_rules;
mod variadic;
mod where_select;

use super::OpDef;
use arithmetic::{add, div, mul, sub};
use bitwise::{bit_shift, bitwise_and, bitwise_not, bitwise_or, bitwise_xor};
use comparison::{equal, greater, greater_or_equal, less, less_or_equal};
use logical::{and, not, or, xor};
use numeric_unary::{abs, neg, sign};
use unary_math::{
    acos, acosh, asin, asinh, atan, atanh, ceil, cos, cosh, erf, exp, floor, log, mish, reciprocal,
    round, sigmoid, sin, sinh, softplus, softsign, sqrt, tan, tanh,
};
use variadic::{max, mean, min, sum};

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "Add", 1, add),
    op_def!("", "Sub", 1, sub),
    op_def!("", "Mul", 1, mul),
    op_def!("", "Div", 1, div),
    op_def!("", "Pow", 1, pow),
    op_def!("", "Mod", 10, modulo),
    op_def!("", "BitShift", 11, bit_shift),
    op_def!("", "BitwiseAnd", 18, bitwise_and),
    op_def!("", "BitwiseOr", 18, bitwise_or),
    op_def!("", "BitwiseXor", 18, bitwise_xor),
    op_def!("", "BitwiseNot", 18, bitwise_not),
    op_def!("", "Abs", 1, abs),
    op_def!("", "Neg", 1, neg),
    op_def!("", "Sign", 9, sign),
    op_def!("", "Reciprocal", 1, reciprocal),
    op_def!("", "Floor", 1, floor),
    op_def!("", "Ceil", 1, ceil),
    op_def!("", "Round", 11, round),
    op_def!("", "Sqrt", 1, sqrt),
    op_def!("", "Exp", 1, exp),
    op_def!("", "Log", 1, log),
    op_def!("", "Sin", 7, sin),
    op_def!("", "Cos", 7, cos),
    op_def!("", "Tan", 7, tan),
    op_def!("", "Asin", 7, asin),
    op_def!("", "Acos", 7, acos),
    op_def!("", "Atan", 7, atan),
    op_def!("", "Sinh", 9, sinh),
    op_def!("", "Cosh", 9, cosh),
    op_def!("", "Asinh", 9, asinh),
    op_def!("", "Acosh", 9, acosh),
    op_def!("", "Atanh", 9, atanh),
    op_def!("", "Tanh", 1, tanh),
    op_def!("", "Erf", 9, erf),
    op_def!("", "Sigmoid", 1, sigmoid),
    op_def!("", "Mish", 18, mish),
    op_def!("", "Softplus", 1, softplus),
    op_def!("", "Softsign", 1, softsign),
    op_def!("", "Swish", 24, swish),
    op_def!("", "HardSigmoid", 1, hard_sigmoid),
    op_def!("", "HardSwish", 14, hard_swish),
    op_def!("", "Relu", 1, relu),
    op_def!("", "LeakyRelu", 1, leaky_relu),
    op_def!("", "Elu", 1, elu),
    op_def!("", "Selu", 1, selu),
    op_def!("", "Celu", 12, celu),
    op_def!("", "Gelu", 20, gelu),
    op_def!("", "ThresholdedRelu", 10, thresholded_relu),
    op_def!("", "PRelu", 1, prelu),
    op_def!("", "Clip", 1, clip),
    op_def!("", "Shrink", 9, shrink),
    op_def!("", "Min", 1, min),
    op_def!("", "Max", 1, max),
    op_def!("", "Mean", 1, mean),
    op_def!("", "Sum", 1, sum),
    op_def!("", "Equal", 1, equal),
    op_def!("", "Less", 1, less),
    op_def!("", "LessOrEqual", 12, less_or_equal),
    op_def!("", "Greater", 1, greater),
    op_def!("", "GreaterOrEqual", 12, greater_or_equal),
    op_def!("", "And", 1, and),
    op_def!("", "Or", 1, or),
    op_def!("", "Xor", 1, xor),
    op_def!("", "Not", 1, not),
    op_def!("", "IsNaN", 9, is_nan),
    op_def!("", "IsInf", 10, is_inf),
    op_def!("", "Where", 9, where_select),
    op_def!("", "Cast", 1, cast),
    op_def!("", "CastLike", 15, cast_like),
    op_def!("", "QuantizeLinear", 10, quantize_linear),
    op_def!("", "DequantizeLinear", 10, dequantize_linear),
    op_def!("", "DynamicQuantizeLinear", 11, dynamic_quantize_linear),
    op_def!("", "BitCast", 26, bit_cast),
    op_def!("", "Identity", 1, identity),
];
