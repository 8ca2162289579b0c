#!/usr/bin/env python3
"""Runtime speed of onnx-light against onnxruntime (CPU), measured in one run.

Usage: python3 scripts/bench_runtime.py [ONNX_LIGHT_BINARY] [MODEL_DIR...]
Needs `pip install onnx onnxruntime numpy` (optional, only for this comparison).
For each model folder (model.onnx + test_data_set_0/input_0.pb) it runs both
runtimes with the same input and threads, and prints median milliseconds and
the ratio onnxruntime / onnx-light (> 1 means onnx-light is faster).
"""
import json, os, statistics, subprocess, sys, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "target", "release", "onnx-light")
models = sys.argv[2:] or [
    os.path.join(here, "..", "..", "shared", "models", d) for d in ("light_squeezenet", "light_resnet50")
]
RUNS, WARMUP = 10, 2
threads = os.cpu_count() or 1

print(f"{'model':<20} {'onnx-light ms':>14} {'onnxruntime ms':>15} {'ratio':>7}")
for d in models:
    model = os.path.join(d, "model.onnx")
    pb = os.path.join(d, "test_data_set_0", "input_0.pb")
    m = onnx.load(model)
    inits = {i.name for i in m.graph.initializer}
    name = [i.name for i in m.graph.input if i.name not in inits][0]
    x = numpy_helper.to_array(onnx.load_tensor(pb))

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for _ in range(WARMUP):
        sess.run(None, {name: x})
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        sess.run(None, {name: x})
        times.append((time.perf_counter() - t0) * 1e3)
    ort_ms = statistics.median(times)

    qname = json.dumps(name)
    cmd = f'config threads {threads}; load {model}; bench --runs {RUNS} --warmup {WARMUP} --format json {qname}=pb("{pb}")'
    out = subprocess.run([binary, "--no-color", "-c", cmd], capture_output=True, text=True, check=True).stdout
    doc = json.loads(out[out.index("{"):])
    ol_ms = doc["median_ms"]
    print(f"{os.path.basename(d):<20} {ol_ms:>14.2f} {ort_ms:>15.2f} {ort_ms / ol_ms:>7.2f}")
