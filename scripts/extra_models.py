#!/usr/bin/env python3
"""Builds more real models in the backend test layout, beyond ../shared/models.

Downloads wheels that bundle .onnx files (with pip, from the package
registry), extracts the models, gives each a random input of a valid size
for its symbolic dimensions, and records what onnxruntime computes, so
that

    onnx-light test target/extra_models
    python3 scripts/shape_coverage.py --keep-value-info target/extra_models

check them the way ../shared/models is checked. Nothing here is committed:
the models are fetched each time (the repository stays small).

Needs: pip, onnx, onnxruntime, numpy.  Usage: python3 scripts/extra_models.py [OUT_DIR]
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# wheel -> {model file inside the wheel: {symbolic dim name or axis: size}}
# Sizes by input axis (input name, axis) when the dimension has no name.
WHEELS = {
    "rapidocr-onnxruntime==1.4.4": {
        # PaddleOCR v4 text detector: float[?,3,?,?]
        "ch_PP-OCRv4_det_infer.onnx": {("x", 0): 1, ("x", 2): 224, ("x", 3): 320},
        # PaddleOCR v4 text recognizer: float[?,3,?,?] (height 48)
        "ch_PP-OCRv4_rec_infer.onnx": {("x", 0): 1, ("x", 2): 48, ("x", 3): 320},
        # PaddleOCR v2 orientation classifier: float[-1,3,?,?] (non-square)
        "ch_ppocr_mobile_v2.0_cls_infer.onnx": {("x", 0): 2, ("x", 2): 48, ("x", 3): 192},
    },
}

NP_TYPES = {1: np.float32, 7: np.int64, 6: np.int32, 11: np.float64, 9: np.bool_}


def fetch(wheel, where):
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", where, wheel],
        check=True,
    )
    name = wheel.split("==")[0].replace("-", "_")
    return glob.glob(os.path.join(where, f"{name}-*.whl"))[0]


def input_shape(vi, sizes):
    dims = []
    for axis, d in enumerate(vi.type.tensor_type.shape.dim):
        if d.HasField("dim_value") and d.dim_value > 0:
            dims.append(d.dim_value)
        elif (vi.name, axis) in sizes:
            dims.append(sizes[(vi.name, axis)])
        elif d.HasField("dim_param") and d.dim_param in sizes:
            dims.append(sizes[d.dim_param])
        else:
            raise SystemExit(f"{vi.name} axis {axis}: no size given for {d}")
    return dims


def build_case(model_bytes, sizes, out_dir):
    os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(model_bytes)
    m = onnx.load_from_string(model_bytes)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for k, vi in enumerate(i for i in m.graph.input if i.name not in inits):
        shape = input_shape(vi, sizes)
        dt = NP_TYPES[vi.type.tensor_type.elem_type]
        a = rng.random(shape).astype(dt)
        feeds[vi.name] = a
        t = numpy_helper.from_array(a, vi.name)
        with open(os.path.join(out_dir, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    for j, (o, a) in enumerate(zip(m.graph.output, outs)):
        t = numpy_helper.from_array(np.asarray(a), o.name)
        with open(os.path.join(out_dir, "test_data_set_0", f"output_{j}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    with open(os.path.join(out_dir, "symbols.json"), "w") as f:
        json.dump({f"{n}:{a}": v for (n, a), v in sizes.items()}, f)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "extra_models")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for wheel, models in WHEELS.items():
            path = fetch(wheel, tmp)
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    base = os.path.basename(member)
                    if base in models:
                        case = os.path.join(out, os.path.splitext(base)[0])
                        build_case(z.read(member), models[base], case)
                        print(f"built {case}")


if __name__ == "__main__":
    main()
