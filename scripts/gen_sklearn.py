#!/usr/bin/env python3
"""Trains scikit-learn estimators and pipelines, converts them with skl2onnx
and writes each in the ONNX backend test layout, with onnxruntime's outputs
as the expected values:

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_0/input_<i>.pb   (TensorProto, or MapProto for a dict input)
    OUT/<case>/test_data_set_0/output_<j>.pb  (TensorProto, or SequenceProto of MapProto
                                               for a ZipMap output)

`onnx-light test OUT` then runs them all. Needs numpy, scikit-learn,
skl2onnx, onnx, onnxruntime and pandas (pip install scikit-learn skl2onnx
onnxruntime pandas). The data it writes stays out of git.

    python scripts/gen_sklearn.py OUT [--only SUBSTRING]
"""

import argparse
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import (
    DictionaryType,
    FloatTensorType,
    Int64TensorType,
    StringTensorType,
)
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.feature_extraction import DictVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    Binarizer,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    StandardScaler,
)
from sklearn.svm import SVC, SVR, LinearSVC, OneClassSVM
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

warnings.filterwarnings("ignore")
RNG = np.random.default_rng(0)
ML_OPSETS = [1, 3]  # ai.onnx.ml opsets the tree/linear converters are written for


def blobs(n=200, features=6, classes=3):
    """A learnable classification problem: class centres plus noise."""
    centres = RNG.normal(0, 3, size=(classes, features))
    y = RNG.integers(0, classes, size=n)
    x = centres[y] + RNG.normal(0, 1.0, size=(n, features))
    return x.astype(np.float32), y


def regression(n=200, features=5):
    x = RNG.normal(0, 1, size=(n, features)).astype(np.float32)
    w = RNG.normal(0, 2, size=features)
    y = x @ w + 0.3 * np.sin(3 * x[:, 0]) + RNG.normal(0, 0.1, size=n)
    return x, y.astype(np.float32)


def str_labels(y):
    names = np.array(["cat", "dog", "eel", "fox", "gnu"])
    return names[y]


def map_proto(d, name=None):
    """A MapProto of string or int64 keys and float32 scalar values (onnx's
    numpy_helper.from_dict cannot take string keys)."""
    m = onnx.MapProto()
    if name:
        m.name = name
    keys = list(d)
    if all(isinstance(k, str) for k in keys):
        m.key_type = onnx.TensorProto.STRING
        m.string_keys.extend(k.encode() for k in keys)
    else:
        m.key_type = onnx.TensorProto.INT64
        m.keys.extend(int(k) for k in keys)
    m.values.elem_type = onnx.SequenceProto.TENSOR
    m.values.tensor_values.extend(numpy_helper.from_array(np.array(d[k], dtype=np.float32)) for k in keys)
    return m


def write_case(out, name, onx, feeds):
    """Runs the model with onnxruntime and writes the case folder."""
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = sess.run(None, feeds)
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data)
    onnx.save(onx, os.path.join(d, "model.onnx"))
    for i, inp in enumerate(sess.get_inputs()):
        value = feeds[inp.name]
        if isinstance(value, dict):
            proto = map_proto(value, inp.name)
        else:
            proto = numpy_helper.from_array(value, inp.name)
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(proto.SerializeToString())
    for j, (meta, value) in enumerate(zip(sess.get_outputs(), outputs)):
        if isinstance(value, list):
            # ZipMap: a list of {label: probability}
            maps = [map_proto(m) for m in value]
            proto = onnx.SequenceProto(name=meta.name, elem_type=onnx.SequenceProto.MAP)
            proto.map_values.extend(maps)
        else:
            proto = numpy_helper.from_array(np.asarray(value), meta.name)
        with open(os.path.join(data, f"output_{j}.pb"), "wb") as f:
            f.write(proto.SerializeToString())


def convert(model, initial_types, ml_opset=3, options=None):
    return convert_sklearn(
        model,
        initial_types=initial_types,
        target_opset={"": 17, "ai.onnx.ml": ml_opset},
        options=options,
    )


def float_input(x):
    return [("X", FloatTensorType([None, x.shape[1]]))]


def classifier_cases():
    x, y = blobs()
    xb, yb = blobs(classes=2)
    test = x[:17]
    testb = xb[:17]
    models = [
        ("logreg_multi", LogisticRegression(max_iter=500), x, y),
        ("logreg_binary", LogisticRegression(max_iter=500), xb, yb),
        ("logreg_multi_str", LogisticRegression(max_iter=500), x, str_labels(y)),
        ("linear_svc", LinearSVC(), x, y),
        ("linear_svc_binary", LinearSVC(), xb, yb),
        ("svc_rbf_proba", SVC(probability=True, random_state=0), x, y),
        ("svc_linear", SVC(kernel="linear"), x, y),
        ("svc_poly_binary", SVC(kernel="poly", degree=3), xb, yb),
        ("svc_sigmoid_proba", SVC(kernel="sigmoid", probability=True, random_state=0), xb, yb),
        ("decision_tree", DecisionTreeClassifier(max_depth=6, random_state=0), x, y),
        ("random_forest", RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0), x, y),
        ("random_forest_binary_str", RandomForestClassifier(n_estimators=10, random_state=0), xb, str_labels(yb)),
        ("extra_trees", ExtraTreesClassifier(n_estimators=10, max_depth=5, random_state=0), x, y),
        ("gradient_boosting_binary", GradientBoostingClassifier(n_estimators=20, random_state=0), xb, yb),
        ("gradient_boosting_multi", GradientBoostingClassifier(n_estimators=10, random_state=0), x, y),
        ("gaussian_nb", GaussianNB(), x, y),
        ("knn", KNeighborsClassifier(n_neighbors=4), x, y),
        ("mlp_classifier", MLPClassifier(hidden_layer_sizes=(16,), max_iter=300, random_state=0), x, y),
        ("scaled_svc", make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)), x, y),
    ]
    for name, model, xt, yt in models:
        model.fit(xt, yt)
        t = testb if xt is xb else test
        if "zipmap" not in _options_of(model):
            # no probabilities, hence no ZipMap (LinearSVC, SVC without probability)
            yield name, convert(model, float_input(xt)), {"X": t}
            continue
        for zipmap in (False, True):
            opts = {id(_last_step(model)): {"zipmap": zipmap}}
            case = f"{name}_{'zipmap' if zipmap else 'nozipmap'}"
            yield case, convert(model, float_input(xt), options=opts), {"X": t}


def _last_step(model):
    return model.steps[-1][1] if isinstance(model, Pipeline) else model


def _options_of(model):
    """The converter options skl2onnx accepts for the model's last step."""
    from skl2onnx._supported_operators import _get_sklearn_operator_name
    from skl2onnx.common._registration import get_converter

    last = _last_step(model)
    conv = get_converter(_get_sklearn_operator_name(type(last)))
    return getattr(conv, "get_allowed_options", lambda: {})() or {}


def regressor_cases():
    x, y = regression()
    test = x[:13]
    models = [
        ("linear_regression", LinearRegression()),
        ("ridge", Ridge(alpha=0.5)),
        ("svr_rbf", SVR()),
        ("svr_linear", SVR(kernel="linear")),
        ("decision_tree_regressor", DecisionTreeRegressor(max_depth=6, random_state=0)),
        ("random_forest_regressor", RandomForestRegressor(n_estimators=20, max_depth=6, random_state=0)),
        ("gradient_boosting_regressor", GradientBoostingRegressor(n_estimators=30, random_state=0)),
        ("mlp_regressor", MLPRegressor(hidden_layer_sizes=(8,), max_iter=500, random_state=0)),
    ]
    for name, model in models:
        model.fit(x, y)
        for ml in ML_OPSETS:
            if ml == 1 and not isinstance(
                model, (DecisionTreeRegressor, RandomForestRegressor, GradientBoostingRegressor)
            ):
                continue
            yield f"{name}_ml{ml}", convert(model, float_input(x), ml_opset=ml), {"X": test}


def transformer_cases():
    x, _ = regression(features=4)
    test = x[:11].copy()
    with_nan = test.copy()
    with_nan[::3, 1] = np.nan
    models = [
        ("standard_scaler", StandardScaler(), test),
        ("min_max_scaler", MinMaxScaler(), test),
        ("normalizer_l1", Normalizer(norm="l1"), test),
        ("normalizer_l2", Normalizer(norm="l2"), test),
        ("normalizer_max", Normalizer(norm="max"), test),
        ("binarizer", Binarizer(threshold=0.2), test),
        ("imputer_mean", SimpleImputer(strategy="mean"), with_nan),
        ("pca", PCA(n_components=2), test),
        ("kmeans", KMeans(n_clusters=3, n_init=3, random_state=0), test),
        ("isolation_forest", IsolationForest(n_estimators=10, random_state=0), test),
        ("one_class_svm", OneClassSVM(nu=0.2), test),
        (
            "imputer_normalizer_binarizer",
            make_pipeline(SimpleImputer(), Normalizer(), Binarizer(threshold=0.1)),
            with_nan,
        ),
    ]
    for name, model, t in models:
        fit_x = with_nan if name.startswith("imputer") else x
        model.fit(fit_x)
        yield name, convert(model, float_input(x)), {"X": t}


def categorical_cases():
    """One-hot encoding of string and integer columns, and a
    ColumnTransformer feeding a classifier from three inputs."""
    n = 120
    colour = RNG.choice(["red", "green", "blue"], size=n)
    size = RNG.choice([1, 2, 5, 9], size=n).astype(np.int64)
    num = RNG.normal(0, 1, size=(n, 2)).astype(np.float32)
    y = ((colour == "red") ^ (num[:, 0] > 0)).astype(np.int64)

    enc = OneHotEncoder(handle_unknown="ignore").fit(colour.reshape(-1, 1))
    yield (
        "one_hot_strings",
        convert(enc, [("colour", StringTensorType([None, 1]))]),
        {"colour": np.array([["red"], ["blue"], ["purple"], ["green"]])},
    )
    enc = OneHotEncoder().fit(size.reshape(-1, 1))
    yield (
        "one_hot_ints",
        convert(enc, [("size", Int64TensorType([None, 1]))]),
        {"size": size[:6].reshape(-1, 1)},
    )

    import pandas as pd

    frame = pd.DataFrame({"colour": colour, "size": size, "a": num[:, 0], "b": num[:, 1]})
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["colour"]),
            ("size", OneHotEncoder(handle_unknown="ignore"), ["size"]),
            ("num", StandardScaler(), ["a", "b"]),
        ]
    )
    for zipmap in (False, True):
        clf = Pipeline([("pre", pre), ("lr", LogisticRegression(max_iter=500))]).fit(frame, y)
        onx = convert(
            clf,
            [
                ("colour", StringTensorType([None, 1])),
                ("size", Int64TensorType([None, 1])),
                ("a", FloatTensorType([None, 1])),
                ("b", FloatTensorType([None, 1])),
            ],
            options={id(_last_step(clf)): {"zipmap": zipmap}},
        )
        feeds = {
            "colour": colour[:9].reshape(-1, 1),
            "size": size[:9].reshape(-1, 1),
            "a": num[:9, :1].copy(),
            "b": num[:9, 1:].copy(),
        }
        yield f"column_transformer_{'zipmap' if zipmap else 'nozipmap'}", onx, feeds


def dict_cases():
    """DictVectorizer: a map input (one row) to a dense row."""
    rows = [{"height": float(RNG.normal(170, 10)), "weight": float(RNG.normal(70, 8))} for _ in range(40)]
    for r in rows[::2]:
        r["age"] = float(RNG.integers(20, 60))
    vec = DictVectorizer(sparse=False).fit(rows)
    onx = convert(vec, [("features", DictionaryType(StringTensorType([1]), FloatTensorType([1])))])
    yield "dict_vectorizer", onx, {"features": {"height": 180.5, "age": 33.0}}


def handmade_cases():
    """ai.onnx.ml operators skl2onnx does not emit for the estimators above,
    built with onnx.helper; onnxruntime still computes the expected values."""
    from onnx import TensorProto as TP
    from onnx import helper as h

    def model(nodes, inputs, outputs, ml=1):
        g = h.make_graph(nodes, "g", inputs, outputs)
        return h.make_model(
            g,
            opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", ml)],
            ir_version=8,
        )

    ml = "ai.onnx.ml"
    yield (
        "feature_vectorizer",
        model(
            [h.make_node("FeatureVectorizer", ["a", "b"], ["y"], domain=ml, inputdimensions=[3, 2])],
            [
                h.make_tensor_value_info("a", TP.INT64, [None, 4]),
                h.make_tensor_value_info("b", TP.INT64, [None, 1]),
            ],
            [h.make_tensor_value_info("y", TP.FLOAT, [None, 5])],
        ),
        {"a": RNG.integers(-5, 5, size=(3, 4)), "b": RNG.integers(0, 9, size=(3, 1))},
    )
    cats = dict(cats_strings=["red", "green", "blue"], cats_int64s=[3, 1, 4])
    yield (
        "category_mapper_to_int",
        model(
            [h.make_node("CategoryMapper", ["x"], ["y"], domain=ml, default_int64=-7, **cats)],
            [h.make_tensor_value_info("x", TP.STRING, [None])],
            [h.make_tensor_value_info("y", TP.INT64, [None])],
        ),
        {"x": np.array(["blue", "pink", "red", "green"])},
    )
    yield (
        "category_mapper_to_string",
        model(
            [h.make_node("CategoryMapper", ["x"], ["y"], domain=ml, **cats)],
            [h.make_tensor_value_info("x", TP.INT64, [None, 2])],
            [h.make_tensor_value_info("y", TP.STRING, [None, 2])],
        ),
        {"x": np.array([[3, 2], [4, 1]], dtype=np.int64)},
    )
    yield (
        "scaler_int64_input",
        model(
            [h.make_node("Scaler", ["x"], ["y"], domain=ml, offset=[1.0, -2.0], scale=[0.5, 3.0])],
            [h.make_tensor_value_info("x", TP.INT64, [None, 2])],
            [h.make_tensor_value_info("y", TP.FLOAT, [None, 2])],
        ),
        {"x": np.array([[1, 2], [7, -3]], dtype=np.int64)},
    )
    yield (
        "normalizer_double_input",
        model(
            [h.make_node("Normalizer", ["x"], ["y"], domain=ml, norm="L2")],
            [h.make_tensor_value_info("x", TP.DOUBLE, [None, 3])],
            [h.make_tensor_value_info("y", TP.FLOAT, [None, 3])],
        ),
        {"x": RNG.normal(size=(4, 3))},
    )
    yield (
        "label_encoder_v2_int_to_float",
        model(
            [h.make_node("LabelEncoder", ["x"], ["y"], domain=ml, keys_int64s=[1, 2, 3], values_floats=[0.5, 1.5, 2.5], default_float=-1.0)],
            [h.make_tensor_value_info("x", TP.INT64, [None])],
            [h.make_tensor_value_info("y", TP.FLOAT, [None])],
            ml=2,
        ),
        {"x": np.array([3, 1, 9, 2], dtype=np.int64)},
    )
    yield (
        "label_encoder_v4_tensors",
        model(
            [
                h.make_node(
                    "LabelEncoder", ["x"], ["y"], domain=ml,
                    keys_tensor=numpy_helper.from_array(np.array([15, 25], dtype=np.int64)),
                    values_tensor=numpy_helper.from_array(np.array([1.5, 2.5], dtype=np.float64)),
                    default_tensor=numpy_helper.from_array(np.array([-1.0], dtype=np.float64)),
                )
            ],
            [h.make_tensor_value_info("x", TP.INT64, [None])],
            [h.make_tensor_value_info("y", TP.DOUBLE, [None])],
            ml=4,
        ),
        {"x": np.array([25, 0, 15], dtype=np.int64)},
    )


GROUPS = [classifier_cases, regressor_cases, transformer_cases, categorical_cases, dict_cases, handmade_cases]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--only", default="", help="only cases whose name contains this")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    count = 0
    for group in GROUPS:
        for name, onx, feeds in group():
            if args.only not in name:
                continue
            write_case(args.out, name, onx, feeds)
            count += 1
    print(f"wrote {count} cases to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
