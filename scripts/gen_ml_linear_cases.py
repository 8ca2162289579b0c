"""Writes scikit-learn conversions in the ONNX backend layout under /tmp/linear-cases."""
import os, sys, shutil
import numpy as np
import onnx, onnxruntime as ort
from onnx import numpy_helper
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import FloatTensorType
from sklearn.linear_model import LogisticRegression, LinearRegression, Ridge
from sklearn.svm import LinearSVC, SVC, SVR, OneClassSVM
from sklearn.preprocessing import StandardScaler, MinMaxScaler, Normalizer, OneHotEncoder, Binarizer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/linear-cases"
rng = np.random.RandomState(0)
X = rng.randn(40, 4).astype(np.float32)
y2 = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
y3 = (np.digitize(X[:, 0], [-0.5, 0.5])).astype(np.int64)
ys = np.array(["cat", "dog", "eel"])[y3]
yr = (X @ np.array([1.0, -2.0, 0.5, 3.0]) + 0.3).astype(np.float32)

def write(name, onx, feeds):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(onx, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    names = [i.name for i in sess.get_inputs()]
    for i, n in enumerate(names):
        t = numpy_helper.from_array(feeds[n], n)
        open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb").write(t.SerializeToString())
    for j, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
        v = np.asarray(v)
        t = numpy_helper.from_array(v, o.name)
        open(os.path.join(d, "test_data_set_0", f"output_{j}.pb"), "wb").write(t.SerializeToString())

def conv(name, model, x, n_feat=4, dtype=FloatTensorType):
    opts = {id(model): {"zipmap": False}} if hasattr(model, "predict_proba") or hasattr(model, "decision_function") and not isinstance(model, (SVR, OneClassSVM)) else None
    try:
        onx = convert_sklearn(model, initial_types=[("X", dtype([None, n_feat]))],
                              target_opset={"": 17, "ai.onnx.ml": 3}, options=opts)
    except Exception as e:
        # some models take no zipmap option
        onx = convert_sklearn(model, initial_types=[("X", dtype([None, n_feat]))],
                              target_opset={"": 17, "ai.onnx.ml": 3})
    write(name, onx, {"X": x})

Xt = X[:7]
cases = [
    ("logreg_binary", LogisticRegression().fit(X, y2)),
    ("logreg_multi", LogisticRegression().fit(X, y3)),
    ("logreg_multi_ovr", LogisticRegression(multi_class="ovr").fit(X, y3) if "multi_class" in LogisticRegression().get_params() else None),
    ("logreg_strings", LogisticRegression().fit(X, ys)),
    ("logreg_binary_strings", LogisticRegression().fit(X, np.array(["no", "yes"])[y2])),
    ("linear_regression", LinearRegression().fit(X, yr)),
    ("linear_regression_2t", LinearRegression().fit(X, np.stack([yr, -yr], 1))),
    ("ridge", Ridge(alpha=0.5).fit(X, yr)),
    ("linear_svc_binary", LinearSVC().fit(X, y2)),
    ("linear_svc_multi", LinearSVC().fit(X, y3)),
    ("standard_scaler", StandardScaler().fit(X)),
    ("minmax_scaler", MinMaxScaler().fit(X)),
    ("normalizer_l1", Normalizer(norm="l1").fit(X)),
    ("normalizer_l2", Normalizer(norm="l2").fit(X)),
    ("normalizer_max", Normalizer(norm="max").fit(X)),
    ("binarizer", Binarizer(threshold=0.2).fit(X)),
    ("pipe_scaler_logreg", make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y3)),
    ("pipe_minmax_ridge", make_pipeline(MinMaxScaler(), Ridge()).fit(X, yr)),
]
for kernel in ["linear", "rbf", "poly", "sigmoid"]:
    cases.append((f"svc_{kernel}", SVC(kernel=kernel).fit(X, y3)))
    cases.append((f"svc_{kernel}_binary", SVC(kernel=kernel).fit(X, y2)))
    cases.append((f"svc_{kernel}_proba", SVC(kernel=kernel, probability=True, random_state=0).fit(X, y3)))
cases += [
    ("svr_rbf", SVR().fit(X, yr)),
    ("svr_linear", SVR(kernel="linear").fit(X, yr)),
    ("one_class_svm", OneClassSVM().fit(X)),
]
Xn = X.copy(); Xn[::3, 1] = np.nan; Xn[1::4, 2] = np.nan
cases_nan = [
    ("simple_imputer_mean", SimpleImputer().fit(Xn)),
    ("simple_imputer_const", SimpleImputer(strategy="constant", fill_value=-1.5).fit(Xn)),
    ("pipe_imputer_scaler_logreg", make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression()).fit(Xn, y2)),
]
ok = fail = 0
for name, m in cases:
    if m is None: continue
    try:
        conv(name, m, Xt); ok += 1
    except Exception as e:
        print("skip", name, type(e).__name__, str(e)[:200]); fail += 1
for name, m in cases_nan:
    try:
        conv(name, m, Xn[:9]); ok += 1
    except Exception as e:
        print("skip", name, type(e).__name__, str(e)[:200]); fail += 1
# OneHotEncoder: ints and strings
from skl2onnx.common.data_types import Int64TensorType, StringTensorType
Xi = rng.randint(0, 4, size=(30, 2)).astype(np.int64)
Xs = np.array([["a", "x"], ["b", "y"], ["c", "x"], ["a", "z"]] * 3, dtype=object)
for name, xx, tt in [("onehot_ints", Xi, Int64TensorType), ("onehot_strings", Xs, StringTensorType)]:
    try:
        m = OneHotEncoder(handle_unknown="ignore").fit(xx)
        onx = convert_sklearn(m, initial_types=[("X", tt([None, 2]))], target_opset={"": 17, "ai.onnx.ml": 3})
        write(name, onx, {"X": xx[:6]}); ok += 1
    except Exception as e:
        print("skip", name, type(e).__name__, str(e)[:200]); fail += 1
print("written", ok, "failed", fail)
