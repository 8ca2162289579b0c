//! Signal processing: DFT, STFT, the windows, MelWeightMatrix.

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "DFT", since: 1, shape: Some(crate::ops::shape_rules::signal::dft), kernel: Some(crate::ops::kernels::signal::dft) },
    OpDef { domain: "", op_type: "STFT", since: 1, shape: Some(crate::ops::shape_rules::signal::stft), kernel: Some(crate::ops::kernels::signal::stft) },
    OpDef { domain: "", op_type: "HannWindow", since: 1, shape: Some(crate::ops::shape_rules::signal::window), kernel: Some(crate::ops::kernels::signal::hann_window) },
    OpDef { domain: "", op_type: "HammingWindow", since: 1, shape: Some(crate::ops::shape_rules::signal::window), kernel: Some(crate::ops::kernels::signal::hamming_window) },
    OpDef { domain: "", op_type: "BlackmanWindow", since: 1, shape: Some(crate::ops::shape_rules::signal::window), kernel: Some(crate::ops::kernels::signal::blackman_window) },
    OpDef { domain: "", op_type: "MelWeightMatrix", since: 1, shape: Some(crate::ops::shape_rules::signal::mel_weight_matrix), kernel: Some(crate::ops::kernels::signal::mel_weight_matrix) },
];
