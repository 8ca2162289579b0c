#!/usr/bin/env python3
"""Runtime speed of onnx-light against onnxruntime (CPU), measured in one run.

Usage: python3 scripts/bench_runtime.py [--threads 1,2] [--rounds 3]
           [--runs 10] [--binary PATH] [MODEL_DIR ...]

Needs `pip install onnx onnxruntime numpy` (only for this comparison; the
project itself never needs Python).

Models: every folder of ../shared/models (model.onnx + test_data_set_0/
input_<i>.pb, in the order of the graph's non-initializer inputs), plus
scripts/transformer_block.txt, a transformer block written in ONNX text
(LayerNormalization, 4-head attention with MatMul + Softmax, a Gelu
feed-forward; symbolic sequence length S, run at S = 128, random input).

For each model and thread count, both engines run the same input with the
same number of threads: onnxruntime in this process, onnx-light through its
`bench` command (events off). Each round times RUNS runs after WARMUP
warm-up runs and keeps the median; the engines alternate round by round so
machine noise hits both, and the table reports the median over rounds.
The ratio is onnx-light / onnxruntime: below 1 means onnx-light is faster.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, ".."))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="*", help="model folders (default: all of ../shared/models and the transformer block)")
    p.add_argument("--binary", default=os.path.join(root, "target", "release", "onnx-light"))
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds per engine (default 3)")
    p.add_argument("--runs", type=int, default=10, help="timed runs per round (default 10)")
    p.add_argument("--warmup", type=int, default=2, help="warm-up runs per round (default 2)")
    p.add_argument("--no-transformer", action="store_true", help="leave out the transformer block")
    p.add_argument("--only", default="", help="comma-separated substrings: bench only the models whose name has one")
    return p.parse_args()


def model_inputs(model_path, data_dir):
    """(name, array) for each graph input without an initializer, read from input_<i>.pb."""
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    feeds = []
    for i, name in enumerate(names):
        pb = os.path.join(data_dir, f"input_{i}.pb")
        feeds.append((name, pb, numpy_helper.to_array(onnx.load_tensor(pb))))
    return feeds


def transformer_case(tmp):
    """Converts scripts/transformer_block.txt to .onnx (S = 128) with a random input."""
    with open(os.path.join(here, "transformer_block.txt")) as f:
        model = onnx.parser.parse_model(f.read())
    path = os.path.join(tmp, "transformer_block.onnx")
    onnx.save(model, path)
    x = np.random.default_rng(0).standard_normal((1, 128, 256)).astype(np.float32)
    pb = os.path.join(tmp, "input_0.pb")
    with open(pb, "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    return "transformer_block S=128", path, [("x", pb, x)]


def ort_round(sess, feeds, runs, warmup):
    inputs = {name: x for name, _, x in feeds}
    for _ in range(warmup):
        sess.run(None, inputs)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def ol_round(binary, model, feeds, threads, runs, warmup):
    given = " ".join(f'{json.dumps(name)}=pb({json.dumps(pb)})' for name, pb, _ in feeds)
    cmd = f"config threads {threads}; load {json.dumps(model)}; bench --runs {runs} --warmup {warmup} --format json {given}"
    out = subprocess.run([binary, "--no-color", "-c", cmd], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"onnx-light failed on {model}: {out.stderr.strip() or out.stdout.strip()}")
    doc = json.loads(out.stdout[out.stdout.index("{"):])
    return doc["median_ms"]


def main():
    args = parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    folders = args.models
    if not folders:
        shared = os.path.join(root, "..", "shared", "models")
        folders = sorted(
            os.path.join(shared, d) for d in os.listdir(shared) if os.path.isfile(os.path.join(shared, d, "model.onnx"))
        )
    tmp = tempfile.mkdtemp(prefix="bench_runtime_")
    cases = []
    for d in folders:
        model = os.path.join(d, "model.onnx")
        cases.append((os.path.basename(os.path.normpath(d)), model, model_inputs(model, os.path.join(d, "test_data_set_0"))))
    if not args.no_transformer and not args.models:
        cases.append(transformer_case(tmp))

    if args.only:
        keys = args.only.split(",")
        cases = [c for c in cases if any(k in c[0] for k in keys)]
    print(f"onnxruntime {ort.__version__}; {args.rounds} rounds x {args.runs} runs (+{args.warmup} warm-up) per engine; "
          f"median ms; ratio = onnx-light / onnxruntime (< 1: onnx-light faster)")
    header = f"{'model':<34} {'threads':>7} {'onnx-light':>11} {'onnxruntime':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    one_thread = {}
    for label, model, feeds in cases:
        for t in threads:
            so = ort.SessionOptions()
            so.intra_op_num_threads = t
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
            ol, rt = [], []
            for _ in range(args.rounds):
                ol.append(ol_round(args.binary, model, feeds, t, args.runs, args.warmup))
                rt.append(ort_round(sess, feeds, args.runs, args.warmup))
            ol_ms, rt_ms = statistics.median(ol), statistics.median(rt)
            extra = ""
            if t == 1:
                one_thread[label] = ol_ms
            elif label in one_thread:
                extra = f"   {t}-thread/1-thread time {ol_ms / one_thread[label]:.2f}"
            print(f"{label:<34} {t:>7} {ol_ms:>11.2f} {rt_ms:>12.2f} {ol_ms / rt_ms:>7.2f}{extra}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
