//! Signal processing: DFT, STFT, the windows, MelWeightMatrix.
//!
//! One operator per file: its shape rule (`shape`) and kernel builder
//! (`kernel`). [`fourier`] holds the transform DFT and STFT share,
//! [`window`] what the three windows share, [`signal_io`] the scalar
//! inputs and the output type of the generators.

mod blackman_window;
mod dft;
mod fourier;
mod hamming_window;
mod hann_window;
mod mel_weight_matrix;
mod signal_io;
mod stft;
mod window;

use super::OpDef;

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    op_def!("", "DFT", 17, dft),
    op_def!("", "STFT", 17, stft),
    op_def!("", "HannWindow", 17, hann_window),
    op_def!("", "HammingWindow", 17, hamming_window),
    op_def!("", "BlackmanWindow", 17, blackman_window),
    op_def!("", "MelWeightMatrix", 17, mel_weight_matrix),
];
