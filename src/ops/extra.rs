//! The remaining operators: losses, signal processing, strings, and
//! miscellaneous default-domain and training operators.

use super::OpDef;
use crate::ops::shape_rules::extra as s;
use crate::runtime::kernels::{loss as kl, misc2 as km, signal as ks, strings as kt};

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    OpDef { domain: "", op_type: "NegativeLogLikelihoodLoss", since: 1, shape: Some(s::negative_log_likelihood_loss), kernel: Some(kl::negative_log_likelihood_loss) },
    OpDef { domain: "", op_type: "SoftmaxCrossEntropyLoss", since: 1, shape: Some(s::softmax_cross_entropy_loss), kernel: Some(kl::softmax_cross_entropy_loss) },
    OpDef { domain: "", op_type: "CumProd", since: 1, shape: Some(s::same_as_input), kernel: Some(km::cum_prod) },
    OpDef { domain: "", op_type: "BitCast", since: 1, shape: Some(s::bit_cast), kernel: Some(km::bit_cast) },
    OpDef { domain: "", op_type: "CenterCropPad", since: 1, shape: Some(s::center_crop_pad), kernel: Some(km::center_crop_pad) },
    OpDef { domain: "", op_type: "Shrink", since: 1, shape: Some(s::same_as_input), kernel: Some(km::shrink) },
    OpDef { domain: "", op_type: "Det", since: 1, shape: Some(s::det), kernel: Some(km::det_op) },
    OpDef { domain: "", op_type: "DynamicQuantizeLinear", since: 1, shape: Some(s::dynamic_quantize_linear), kernel: Some(km::dynamic_quantize_linear) },
    OpDef { domain: "", op_type: "MaxUnpool", since: 1, shape: Some(s::max_unpool), kernel: Some(km::max_unpool) },
    OpDef { domain: "", op_type: "Col2Im", since: 1, shape: Some(s::col2im), kernel: Some(km::col2im) },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Adagrad", since: 1, shape: Some(s::optimizer), kernel: Some(km::adagrad) },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Momentum", since: 1, shape: Some(s::optimizer), kernel: Some(km::momentum) },
    OpDef { domain: "ai.onnx.preview.training", op_type: "Adam", since: 1, shape: Some(s::optimizer), kernel: Some(km::adam) },
    OpDef { domain: "", op_type: "DFT", since: 1, shape: Some(s::dft), kernel: Some(ks::dft) },
    OpDef { domain: "", op_type: "STFT", since: 1, shape: Some(s::stft), kernel: Some(ks::stft) },
    OpDef { domain: "", op_type: "HannWindow", since: 1, shape: Some(s::window), kernel: Some(ks::hann_window) },
    OpDef { domain: "", op_type: "HammingWindow", since: 1, shape: Some(s::window), kernel: Some(ks::hamming_window) },
    OpDef { domain: "", op_type: "BlackmanWindow", since: 1, shape: Some(s::window), kernel: Some(ks::blackman_window) },
    OpDef { domain: "", op_type: "MelWeightMatrix", since: 1, shape: Some(s::mel_weight_matrix), kernel: Some(ks::mel_weight_matrix) },
    OpDef { domain: "", op_type: "StringConcat", since: 1, shape: Some(s::string_concat), kernel: Some(kt::string_concat) },
    OpDef { domain: "", op_type: "StringSplit", since: 1, shape: Some(s::string_split), kernel: Some(kt::string_split) },
    OpDef { domain: "", op_type: "RegexFullMatch", since: 1, shape: Some(s::regex_full_match), kernel: Some(kt::regex_full_match) },
    OpDef { domain: "", op_type: "TfIdfVectorizer", since: 1, shape: Some(s::tfidf_vectorizer), kernel: Some(kt::tfidf_vectorizer) },
    OpDef { domain: "", op_type: "DeformConv", since: 1, shape: Some(s::deform_conv), kernel: Some(km::deform_conv) },
];
