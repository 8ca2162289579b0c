//! The `ai.onnx.ml` domain: classical machine-learning operators as
//! scikit-learn converters (skl2onnx) emit them.
//!
//! One operator per file. Each file holds the operator's attributes decoded
//! once into a typed struct (an attribute of the wrong type is an error that
//! names it), its shape rule (`shape`) and its kernel builder (`kernel`).
//! What several operators share has a file named for it: [`features`] (the
//! `[N, C]` input rows), [`post_transform`] (SOFTMAX, LOGISTIC, …).
//! Adding an operator is one file here plus one line in [`TABLE`].

mod array_feature_extractor;
mod binarizer;
mod cast_map;
mod category_mapper;
mod dict_vectorizer;
mod feature_vectorizer;
pub(crate) mod features;
mod forest;
pub(crate) mod post_transform;
mod tree_ensemble;
mod tree_ensemble_classifier;
mod tree_ensemble_regressor;
mod tree_nodes_v3;
mod zip_map;
// linear models, SVMs and feature transforms
pub(crate) mod class_labels;
mod imputer;
mod label_encoder;
mod linear_classifier;
mod linear_regressor;
mod normalizer;
mod one_hot_encoder;
mod scaler;
mod svm_classifier;
pub(crate) mod svm_kernel;
mod svm_regressor;
#[cfg(test)]
pub(crate) mod test_node;

use super::OpDef;

/// One `ai.onnx.ml` table entry: the operator's shape rule and kernel are
/// the `shape` and `kernel` functions of its module.
macro_rules! ml_op {
    ($op:literal, $since:literal, $module:ident) => {
        crate::ops::op_def!("ai.onnx.ml", $op, $since, $module)
    };
}

#[rustfmt::skip]
pub const TABLE: &[OpDef] = &[
    ml_op!("ArrayFeatureExtractor", 1, array_feature_extractor),
    ml_op!("Binarizer", 1, binarizer),
    ml_op!("CastMap", 1, cast_map),
    ml_op!("CategoryMapper", 1, category_mapper),
    ml_op!("DictVectorizer", 1, dict_vectorizer),
    ml_op!("FeatureVectorizer", 1, feature_vectorizer),
    ml_op!("ZipMap", 1, zip_map),
    ml_op!("TreeEnsemble", 5, tree_ensemble),
    ml_op!("TreeEnsembleClassifier", 1, tree_ensemble_classifier),
    ml_op!("TreeEnsembleRegressor", 1, tree_ensemble_regressor),
    // linear models, SVMs and feature transforms
    ml_op!("Imputer", 1, imputer),
    ml_op!("LabelEncoder", 1, label_encoder),
    ml_op!("LinearClassifier", 1, linear_classifier),
    ml_op!("LinearRegressor", 1, linear_regressor),
    ml_op!("Normalizer", 1, normalizer),
    ml_op!("OneHotEncoder", 1, one_hot_encoder),
    ml_op!("Scaler", 1, scaler),
    ml_op!("SVMClassifier", 1, svm_classifier),
    ml_op!("SVMRegressor", 1, svm_regressor),
];
