#!/bin/sh
# Times our shape inference against onnx.shape_inference.infer_shapes on the
# same generated ~100,000-node model, and prints the ratio.
# Usage: scripts/bench_infer.sh [NODES]
set -e
cd "$(dirname "$0")/.."
NODES=${1:-100000}
MODEL=${BENCH_MODEL:-/tmp/bench_infer.onnx}
PY=${PYTHON:-python3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release --example bench_infer >/dev/null 2>&1 || cargo build --release --example bench_infer
OURS=$("$CARGO_TARGET_DIR/release/examples/bench_infer" "$MODEL" "$NODES" | tee /dev/stderr | awk '$1 == "seconds" {print $2}')
"$PY" - "$MODEL" "$OURS" <<'PY'
import sys, time
import onnx
from onnx import shape_inference
path, ours = sys.argv[1], float(sys.argv[2])
m = onnx.load(path)
for prop in (False, True):
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        shape_inference.infer_shapes(m, data_prop=prop)
        best = min(best, time.perf_counter() - t)
    print(f"onnx infer_shapes(data_prop={prop}): {best:.4f} s; ours {ours:.4f} s; "
          f"ratio ours/onnx = {ours / best:.2f}")
PY
