#!/usr/bin/env python3
"""Big-weight models: onnx-light vs onnxruntime, wall time and peak RSS.

Generates models whose weights live in external data (MatMul chain,
ReduceSum over one initializer, embedding Gather + MatMul head, a Conv
stack), then runs each engine in its own process (one thread) and reports
time and peak RSS (from wait4's rusage of that child), side by side with
the ratios onnx-light / onnxruntime, and whether the outputs agree.

onnx-light's time is its whole process (start, load, run, print);
onnxruntime's is its in-process session creation + run, without Python's
start and imports, and its peak RSS has the RSS of `import numpy,
onnxruntime` taken off: both choices favour onnxruntime. The weights file
is read once before each engine runs, so both find it in the page cache
(on a machine with less free memory than the weights, both read from disk).

Weights are written straight into the external data file in chunks (each
on a 4096-byte boundary), so generating a model needs no memory of its
size: `--gib 14 --only matmul --skip-ort` builds and runs a 14 GiB model on
a 24 GB machine.

  python3 scripts/bench_memory.py [--gib 1] [--dir target/bench_memory/<gib>g]
      [--only matmul,reduce,embed,conv] [--regen] [--skip-ort] [--json]
      [--bin target/release/onnx-light]

Models are written once per size and reused when present (delete the
folder or pass --regen to rebuild them).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MiB = 1 << 20


class DataFile:
    """Writes weights straight into the external data file, chunk by chunk,
    so a 14 GiB model never sits in Python's memory; each weight starts on a
    4096-byte boundary."""

    CHUNK = 1 << 24  # elements per write

    def __init__(self, path):
        self.path = path
        self.f = open(path, "wb")
        self.sums = {}  # name -> exact (float64) sum of the weight

    def add(self, name, shape, rng, scale):
        pad = (-self.f.tell()) % 4096
        self.f.write(b"\0" * pad)
        offset = self.f.tell()
        n = int(np.prod(shape))
        left = n
        total = 0.0
        while left:
            m = min(left, self.CHUNK)
            a = rng.standard_normal(size=m, dtype=np.float32)
            a *= np.float32(scale)
            self.f.write(a.tobytes())
            total += float(a.sum(dtype=np.float64))
            left -= m
        self.sums[name] = total
        t = TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(shape)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", os.path.basename(self.path)), ("offset", str(offset)), ("length", str(n * 4))):
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    def close(self):
        self.f.close()


def save(model, path):
    onnx.save_model(model, path)


def rng_f32(rng, shape, scale):
    a = rng.standard_normal(size=shape, dtype=np.float32)
    a *= np.float32(scale)
    return a


def model_matmul(gib, d, rng):
    # 4 square weights of gib/4 each, x[1,K]
    per = int(gib * (1 << 30)) // 4
    k = int(math.isqrt(per // 4))
    inits, nodes = [], []
    prev = "x"
    for i in range(4):
        inits.append(d.add(f"w{i}", (k, k), rng, 1.0 / math.sqrt(k)))
        out = "y" if i == 3 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [out]))
        prev = out
    g = helper.make_graph(
        nodes,
        "matmul_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, k])],
        inits,
    )
    x = rng_f32(rng, (1, k), 1.0)
    return g, {"x": x}, f"4 MatMul, 4 x [{k},{k}] f32, x[1,{k}]"


def model_reduce(gib, d, rng):
    n = int(gib * (1 << 30)) // 4
    nodes = [
        helper.make_node("ReduceSum", ["w", "axes"], ["s"], keepdims=0),
        helper.make_node("Add", ["s", "x"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "reduce_sum",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [d.add("w", (n,), rng, 1.0), numpy_helper.from_array(np.array([0], np.int64), "axes")],
    )
    return g, {"x": np.array(0.0, np.float32)}, f"ReduceSum over w[{n}] f32"


def exact_reduce(path):
    """The float64 sum of the reduce model's weight (its only big tensor),
    read back from the data file in chunks."""
    w = np.memmap(path + ".data", dtype=np.float32, mode="r")
    step = 1 << 24
    return float(sum(w[i:i + step].sum(dtype=np.float64) for i in range(0, len(w), step)))


def model_embed(gib, d, rng):
    # table [V,D] and head [D,V], gib/2 each; 16 token ids
    dim = 4096
    v = int(gib * (1 << 30)) // 2 // (dim * 4)
    table = d.add("table", (v, dim), rng, 1.0)
    head = d.add("head", (dim, v), rng, 1.0 / math.sqrt(dim))
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
        helper.make_node("MatMul", ["e", "head"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "embed_head",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, v])],
        [table, head],
    )
    ids = rng.integers(0, v, size=(1, 16), dtype=np.int64)
    return g, {"ids": ids}, f"Gather table[{v},{dim}] + MatMul head[{dim},{v}], 16 ids"


def model_conv(gib, d, rng):
    # 4 Conv 3x3 layers, weights gib/8 in total, input [1,C,16,16]
    per = int(gib * (1 << 30)) // 8 // 4
    c = int(math.isqrt(per // (9 * 4)))
    inits, nodes = [], []
    prev = "x"
    for i in range(4):
        inits.append(d.add(f"w{i}", (c, c, 3, 3), rng, 1.0 / math.sqrt(9 * c)))
        out = "y" if i == 3 else f"h{i}"
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [out], pads=[1, 1, 1, 1]))
        prev = out
    g = helper.make_graph(
        nodes,
        "conv_stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 16, 16])],
        inits,
    )
    x = rng_f32(rng, (1, c, 16, 16), 1.0)
    return g, {"x": x}, f"4 Conv 3x3, 4 x [{c},{c},3,3] f32, x[1,{c},16,16]"


MODELS = {
    "matmul": model_matmul,
    "reduce": model_reduce,
    "embed": model_embed,
    "conv": model_conv,
}


def build(name, gib, d, regen):
    path = os.path.join(d, f"{name}.onnx")
    meta = os.path.join(d, f"{name}.json")
    if not regen and os.path.exists(path) and os.path.exists(meta):
        with open(meta) as f:
            m = json.load(f)
        if name == "reduce" and "exact" not in m:
            m["exact"] = exact_reduce(path)
            with open(meta, "w") as f:
                json.dump(m, f)
        return path, m["inputs"], m["desc"], m.get("exact")
    rng = np.random.default_rng(16)
    data = DataFile(path + ".data")
    g, inputs, desc = MODELS[name](gib, data, rng)
    data.close()
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, path)
    files = {}
    for k, v in inputs.items():
        f = os.path.join(d, f"{name}.{k}.npy")
        np.save(f, v)
        files[k] = f
    exact = sum(data.sums.values()) if name == "reduce" else None
    with open(meta, "w") as f:
        json.dump({"inputs": files, "desc": desc, "exact": exact}, f)
    return path, files, desc, exact


ORT_CHILD = r"""
import sys, json, time
import numpy as np, onnxruntime as ort
path, inputs = sys.argv[1], json.loads(sys.argv[2])
t0 = time.perf_counter()
so = ort.SessionOptions()
so.intra_op_num_threads = 1
so.inter_op_num_threads = 1
s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
feed = {k: np.load(v) for k, v in inputs.items()}
out = s.run(None, feed)
t1 = time.perf_counter()
o = out[0]
print(json.dumps({"inner": t1 - t0, "sum": float(np.asarray(o, np.float64).sum()),
                  "absmax": float(np.abs(np.asarray(o, np.float64)).max()),
                  "shape": list(np.shape(o))}))
"""


def run_measured(cmd, env=None):
    """Runs cmd, returning (wall seconds, peak RSS bytes, stdout, stderr, rc)."""
    r_fd, w_fd = os.pipe()
    e_fd_r, e_fd_w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r_fd)
        os.close(e_fd_r)
        os.dup2(w_fd, 1)
        os.dup2(e_fd_w, 2)
        try:
            os.execvpe(cmd[0], cmd, env or os.environ)
        finally:
            os._exit(127)
    os.close(w_fd)
    os.close(e_fd_w)
    chunks_o, chunks_e = [], []
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(r_fd, selectors.EVENT_READ, chunks_o)
    sel.register(e_fd_r, selectors.EVENT_READ, chunks_e)
    open_fds = 2
    while open_fds:
        for key, _ in sel.select():
            b = os.read(key.fd, 65536)
            if not b:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_fds -= 1
            else:
                key.data.append(b)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_maxrss * 1024, b"".join(chunks_o).decode(), b"".join(chunks_e).decode(), rc


def warm(path):
    """Reads a file once, so its pages are in the page cache."""
    if os.path.exists(path):
        with open(path, "rb") as f:
            while f.read(64 * MiB):
                pass


def stats_of(stdout):
    """The JSON object onnx-light's `print y --stats --format json` wrote last."""
    at = stdout.rfind("{\n")
    try:
        return json.loads(stdout[at:]) if at >= 0 else None
    except ValueError:
        return None


def agree(ol, ort_r, exact=None):
    """Whether the two outputs have the same sum, to a relative 1e-4 of the
    output's magnitude (a different summation order moves the last digits).
    With an exact (float64) answer, each engine is compared with it instead,
    to a relative 1e-6: onnxruntime's float32 accumulation drifts on long
    sums, which is then named."""
    st = stats_of(ol[2])
    if st is None:
        return "-"
    ol_sum = st["mean"] * st["count"]
    r = None
    if ort_r is not None and ort_r[4] == 0:
        try:
            r = json.loads(ort_r[2].strip().splitlines()[-1])
        except (ValueError, IndexError):
            r = None
    if exact is not None:
        def off(v):
            return abs(v - exact) <= 1e-6 * max(abs(exact), 1.0)
        parts = ["onnx-light exact" if off(ol_sum) else f"onnx-light NO ({ol_sum:.9g} vs {exact:.9g})"]
        if r is not None:
            parts.append("onnxruntime exact" if off(r["sum"]) else f"onnxruntime off by {r['sum'] - exact:+.3g} (float32 sum)")
        return "; ".join(parts)
    if r is None:
        return "-"
    scale = max(r["absmax"], 1e-30) * max(st["count"], 1) ** 0.5
    return "yes" if abs(ol_sum - r["sum"]) <= 1e-4 * scale + 1e-6 * abs(r["sum"]) else f"NO ({ol_sum:.6g} vs {r['sum']:.6g})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gib", type=float, default=1.0, help="weights per model in GiB (default 1)")
    ap.add_argument("--dir", default=None, help="where models go (default target/bench_memory/<gib>g)")
    ap.add_argument("--only", default=",".join(MODELS), help="comma list of: " + ",".join(MODELS))
    ap.add_argument("--bin", default="target/release/onnx-light")
    ap.add_argument("--regen", action="store_true", help="rebuild the models even if present")
    ap.add_argument("--skip-ort", action="store_true")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON")
    args = ap.parse_args()
    d = args.dir or os.path.join("target", "bench_memory", f"{args.gib:g}g")
    os.makedirs(d, exist_ok=True)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model '{n}' (known: {', '.join(MODELS)})")
    # what Python, numpy and onnxruntime cost before any model: taken off
    # onnxruntime's figures so the comparison is of the engines alone
    base_t, base_m = None, 0
    if not args.skip_ort:
        b = run_measured([sys.executable, "-c", "import numpy, onnxruntime"])
        base_t, base_m = b[0], b[1]
        print(f"# python + import onnxruntime alone: {base_t:.2f} s, peak RSS {base_m / 1e9:.2f} GB "
              "(onnxruntime's time below is its in-process load + run; its RSS has this baseline taken off)",
              file=sys.stderr)
    rows = []
    for n in names:
        t = time.perf_counter()
        path, inputs, desc, exact = build(n, args.gib, d, args.regen)
        gen = time.perf_counter() - t
        size = os.path.getsize(path + ".data") if os.path.exists(path + ".data") else 0
        print(f"# {n}: {desc}; weights {size / MiB:.0f} MiB (ready in {gen:.1f} s)", file=sys.stderr)
        feeds = " ".join(f'{k}=npy("{os.path.abspath(v)}")' for k, v in inputs.items())
        # the stats of y let the two engines' outputs be compared (sum and max)
        script = f"config threads 1; load {os.path.abspath(path)}; run {feeds}; print y --stats --format json"
        env = dict(os.environ, NO_COLOR="1")
        # both engines start with the weights in the page cache: the
        # comparison is of the engines, not of the disk (the first engine to
        # read a cold 4 GiB file would pay seconds of I/O the other skips)
        warm(path + ".data")
        ol = run_measured([args.bin, "--no-color", "-c", script], env)
        if ol[4] != 0:
            print(f"onnx-light failed on {n} (rc {ol[4]}):\n{ol[3][-2000:]}", file=sys.stderr)
        ort_r = None
        if not args.skip_ort:
            warm(path + ".data")
            ort_r = run_measured([sys.executable, "-c", ORT_CHILD, os.path.abspath(path), json.dumps(inputs)])
            if ort_r[4] != 0:
                print(f"onnxruntime failed on {n} (rc {ort_r[4]}):\n{ort_r[3][-2000:]}", file=sys.stderr)
        rows.append((n, size, ol, ort_r, exact))
    print()
    hdr = f"| model | weights | onnx-light time | onnx-light peak RSS | onnxruntime load+run | onnxruntime peak RSS - baseline | time ratio | RSS ratio | outputs agree |"
    print(hdr)
    print("|---|---|---|---|---|---|---|---|---|")
    out_json = []
    for n, size, ol, ort_r, exact in rows:
        o_t, o_m = ol[0], ol[1]
        if ort_r and ort_r[4] == 0:
            r_t = json.loads(ort_r[2].strip().splitlines()[-1])["inner"]
            r_m = max(ort_r[1] - base_m, 1)
            ratio_t, ratio_m = f"{o_t / r_t:.2f}x", f"{o_m / r_m:.2f}x"
            rs = f"{r_t:.2f} s | {r_m / 1e9:.2f} GB"
        else:
            r_t = r_m = None
            ratio_t = ratio_m = "-"
            rs = "- | -"
        fail = "" if ol[4] == 0 else " (failed)"
        print(f"| {n} | {size / MiB:.0f} MiB | {o_t:.2f} s{fail} | {o_m / 1e9:.2f} GB | {rs} | {ratio_t} | {ratio_m} | {agree(ol, ort_r, exact)} |")
        out_json.append({"model": n, "weights": size, "ol_s": o_t, "ol_rss": o_m, "ort_s": r_t, "ort_rss": r_m})
    if args.json:
        print(json.dumps(out_json))


if __name__ == "__main__":
    main()
