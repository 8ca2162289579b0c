#!/usr/bin/env python3
"""Shape coverage, ours vs peers, in one run.

For every model of ../shared/onnx-backend/node/*/model.onnx and
../shared/models/*/model.onnx (or the paths given), counts the node outputs
of the main graph and how many get a complete shape (every dimension a
value or a symbol; unknown `?` does not count) from:
  - onnx.shape_inference.infer_shapes(m, data_prop=True)
  - onnxruntime's SymbolicShapeInference.infer_shapes
  - ours: the shape_coverage example of this crate (run here too).
graph.value_info is cleared before inference for all three tools; declared
graph outputs are kept. With --keep-value-info the declared value_info
stays (as a user loading a real export sees it) and every model gets its
own row.

Usage: python3 scripts/shape_coverage.py [--no-build] [--keep-value-info] [MODEL_OR_DIR...]
       python3 scripts/shape_coverage.py --real   (= --keep-value-info ../shared/models)
       python3 scripts/shape_coverage.py --real --record tests/real_models_peers.tsv
(--record writes model, values and each peer's complete count, which
tests/suite/real_models.rs holds ours to.)
"""
import glob
import os
import signal
import subprocess
import sys
import tempfile

import onnx
from onnx import shape_inference

try:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
except Exception:  # pragma: no cover
    SymbolicShapeInference = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")
TARGET = os.environ.get("CARGO_TARGET_DIR", "target")
TIMEOUT = 30


def model_paths(args):
    paths = []
    for a in args:
        if os.path.isdir(a):
            direct = os.path.join(a, "model.onnx")
            paths += [direct] if os.path.isfile(direct) else sorted(glob.glob(os.path.join(a, "*", "model.onnx")))
        else:
            paths.append(a)
    if not args:
        paths = sorted(glob.glob(os.path.join(SHARED, "onnx-backend", "node", "*", "model.onnx")))
        paths += sorted(glob.glob(os.path.join(SHARED, "models", "*", "model.onnx")))
    return [os.path.normpath(os.path.abspath(p)) for p in paths]


def complete(tp):
    """True when a TypeProto has a complete shape (recursively)."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, kind)
        if t.elem_type == 0 or not t.HasField("shape"):
            return False
        return all(d.HasField("dim_value") or (d.HasField("dim_param") and d.dim_param) for d in t.shape.dim)
    if kind == "sequence_type":
        return complete(tp.sequence_type.elem_type)
    if kind == "optional_type":
        return complete(tp.optional_type.elem_type)
    if kind == "map_type":
        return complete(tp.map_type.value_type)
    return False


def count(model, inferred):
    """(values, complete) over the node outputs of the main graph."""
    g = inferred.graph
    types = {v.name: v.type for v in list(g.value_info) + list(g.output)}
    names = [o for n in model.graph.node for o in n.output if o]
    return len(names), sum(1 for o in names if o in types and complete(types[o]))


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout()


KEEP_VALUE_INFO = False


def run(tool, model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    if not KEEP_VALUE_INFO:
        del m.graph.value_info[:]
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        if tool == "onnx":
            return shape_inference.infer_shapes(m, data_prop=True), None
        out = SymbolicShapeInference.infer_shapes(m, auto_merge=True, guess_output_rank=False)
        return (out, None) if out is not None else (None, "NoModel")
    except (Exception, Timeout) as e:  # a failing tool infers nothing
        return None, type(e).__name__
    finally:
        signal.alarm(0)


def ours(paths, build, keep):
    if build:
        subprocess.run(
            ["cargo", "build", "--release", "--example", "shape_coverage"],
            cwd=ROOT, check=True, env=dict(os.environ, CARGO_TARGET_DIR=TARGET),
        )
    exe = os.path.join(TARGET, "release", "examples", "shape_coverage")
    res = {}
    flags = ["--keep-value-info"] if keep else []
    out = subprocess.run([exe] + flags + paths, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0] != "TOTAL":
            res[os.path.normpath(parts[0])] = (int(parts[1]), int(parts[2]))
    return res


def main():
    global KEEP_VALUE_INFO
    flags = {"--no-build", "--keep-value-info", "--real"}
    argv = sys.argv[1:]
    record = None
    if "--record" in argv:
        k = argv.index("--record")
        record = argv[k + 1]
        del argv[k:k + 2]
    args = [a for a in argv if a not in flags]
    build = "--no-build" not in sys.argv
    KEEP_VALUE_INFO = "--keep-value-info" in sys.argv or "--real" in sys.argv
    if "--real" in sys.argv and not args:
        args = [os.path.join(SHARED, "models")]
    paths = model_paths(args)
    our = ours(paths, build, KEEP_VALUE_INFO)
    # onnxruntime's symbolic inference writes a temporary model in the cwd
    os.chdir(tempfile.mkdtemp(prefix="shape_coverage_"))
    tools = ["ours", "onnx", "ort-symbolic"]
    tot = {t: [0, 0] for t in tools}
    rows = []
    fails = {"onnx": 0, "ort-symbolic": 0}
    verbose = os.environ.get("VERBOSE")
    for p in paths:
        try:
            model = onnx.load(p)
        except Exception:
            continue
        n, _ = count(model, model)
        row = {"ours": our.get(p, (n, 0))[1]}
        for tool, key in (("onnx", "onnx"), ("ort", "ort-symbolic")):
            if tool == "ort" and SymbolicShapeInference is None:
                row[key] = 0
                continue
            inferred, err = run(tool, model)
            if err:
                fails[key] += 1
                row[key] = 0
            else:
                row[key] = count(model, inferred)[1]
        rows.append((os.path.basename(os.path.dirname(p)), n, row["onnx"], row["ort-symbolic"]))
        for t in tools:
            tot[t][0] += n
            tot[t][1] += row[t]
        if verbose or KEEP_VALUE_INFO:
            name = os.path.basename(os.path.dirname(p))
            print(f"{name:<34}{n:>7} values  " + "  ".join(f"{t} {row[t]}" for t in tools))
    if record:
        with open(os.path.join(ROOT, record) if not os.path.isabs(record) else record, "w") as f:
            f.write("# model\tvalues\tonnx_data_prop\tort_symbolic  (scripts/shape_coverage.py --record)\n")
            for r in rows:
                f.write("\t".join(str(x) for x in r) + "\n")
    print(f"models: {len(paths)}")
    print(f"{'tool':<14}{'values':>8}{'complete':>10}{'share':>9}{'failed':>8}")
    for t in tools:
        v, c = tot[t]
        share = 100.0 * c / v if v else 0.0
        print(f"{t:<14}{v:>8}{c:>10}{share:>8.2f}%{fails.get(t, 0):>8}")


if __name__ == "__main__":
    main()
