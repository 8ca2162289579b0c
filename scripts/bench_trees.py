#!/usr/bin/env python3
"""Tree-ensemble speed of onnx-light against onnxruntime (CPU, one thread).

Usage: python3 scripts/bench_trees.py [ONNX_LIGHT_BINARY] [--rows N] [--trees T]
Needs scikit-learn, skl2onnx, onnx, onnxruntime and numpy (optional, only for
this comparison). Trains a RandomForestRegressor and a 3-class
RandomForestClassifier (T trees, depth 10, 20 features), converts them with
skl2onnx (ai.onnx.ml 3, no ZipMap), and times one batch of N rows with
onnxruntime (intra_op_num_threads=1) and with onnx-light's `bench`
(`config threads 1`, then all cores). Prints median milliseconds and the
ratio onnxruntime / onnx-light (> 1 means onnx-light is faster).
"""
import argparse, json, os, statistics, subprocess, tempfile, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from skl2onnx import to_onnx

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("binary", nargs="?", default=os.path.join(here, "..", "target", "release", "onnx-light"))
ap.add_argument("--rows", type=int, default=10_000)
ap.add_argument("--trees", type=int, default=500)
ap.add_argument("--runs", type=int, default=10)
args = ap.parse_args()
RUNS, WARMUP, FEATURES = args.runs, 2, 20

rng = np.random.RandomState(0)
X = rng.randn(20_000, FEATURES).astype(np.float32)
lin = X[:, :5].sum(axis=1) + np.sin(X[:, 5] * 3)
y_reg = lin + 0.3 * rng.randn(len(X))
y_cls = np.digitize(lin, [-1.0, 1.0])
x_test = rng.randn(args.rows, FEATURES).astype(np.float32)

models = [
    ("rf_regressor", RandomForestRegressor(n_estimators=args.trees, max_depth=10, n_jobs=-1, random_state=0), y_reg),
    ("rf_classifier", RandomForestClassifier(n_estimators=args.trees, max_depth=10, n_jobs=-1, random_state=0), y_cls),
]


def onnx_light_ms(model_path, pb_path, name, threads):
    qname = json.dumps(name)
    cfg = f"config threads {threads}; " if threads else ""
    cmd = f'{cfg}load {model_path}; bench --runs {RUNS} --warmup {WARMUP} --format json {qname}=pb("{pb_path}")'
    out = subprocess.run([args.binary, "--no-color", "-c", cmd], capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])["median_ms"]


print(f"{args.trees} trees, depth 10, {FEATURES} features, batch of {args.rows} rows; median of {RUNS} runs")
print(f"{'model':<15} {'nodes':>8} {'onnxruntime 1t ms':>18} {'onnx-light 1t ms':>17} {'ratio':>6} {'onnx-light all ms':>18} {'ratio':>6}")
with tempfile.TemporaryDirectory() as tmp:
    for label, m, y in models:
        m.fit(X, y)
        opts = {id(m): {"zipmap": False}} if hasattr(m, "predict_proba") else None
        proto = to_onnx(m, X[:1], options=opts, target_opset={"": 17, "ai.onnx.ml": 3})
        nodes = len(next(a for a in proto.graph.node[0].attribute if a.name == "nodes_nodeids").ints)
        path = os.path.join(tmp, f"{label}.onnx")
        onnx.save(proto, path)
        name = proto.graph.input[0].name
        pb = os.path.join(tmp, f"{label}_x.pb")
        with open(pb, "wb") as f:
            f.write(numpy_helper.from_array(x_test, name).SerializeToString())

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        for _ in range(WARMUP):
            sess.run(None, {name: x_test})
        times = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            sess.run(None, {name: x_test})
            times.append((time.perf_counter() - t0) * 1e3)
        ort_ms = statistics.median(times)
        one = onnx_light_ms(path, pb, name, 1)
        every = onnx_light_ms(path, pb, name, None)
        print(f"{label:<15} {nodes:>8} {ort_ms:>18.1f} {one:>17.1f} {ort_ms / one:>6.2f} {every:>18.1f} {ort_ms / every:>6.2f}")
