//! Signal processing: DFT, STFT, the windows, MelWeightMatrix.

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "DFT", since: 1, shape: crate::ops::shape_rules::signal::dft, kernel: crate::ops::kernels::signal::dft, deterministic: true },
    OpDef { domain: "", op_type: "STFT", since: 1, shape: crate::ops::shape_rules::signal::stft, kernel: crate::ops::kernels::signal::stft, deterministic: true },
    OpDef { domain: "", op_type: "HannWindow", since: 1, shape: crate::ops::shape_rules::signal::window, kernel: crate::ops::kernels::signal::hann_window, deterministic: true },
    OpDef { domain: "", op_type: "HammingWindow", since: 1, shape: crate::ops::shape_rules::signal::window, kernel: crate::ops::kernels::signal::hamming_window, deterministic: true },
    OpDef { domain: "", op_type: "BlackmanWindow", since: 1, shape: crate::ops::shape_rules::signal::window, kernel: crate::ops::kernels::signal::blackman_window, deterministic: true },
    OpDef { domain: "", op_type: "MelWeightMatrix", since: 1, shape: crate::ops::shape_rules::signal::mel_weight_matrix, kernel: crate::ops::kernels::signal::mel_weight_matrix, deterministic: true },
];
