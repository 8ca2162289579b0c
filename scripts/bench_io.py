"""Python side of scripts/bench_io.sh (see there), plus the checker run.

  bench_io.py gen-text FILE [NODES]   write a text model: a chain of Add/Relu/Mul
  bench_io.py text FILE [RUNS]        time onnx.parser.parse_model / onnx.printer.to_text
  bench_io.py load PATH [--read]      time onnx.load(load_external_data=True) [+ to_array]
  bench_io.py ratios RESULTS          print onnx-light / onnx ratios from "key value" lines
  bench_io.py check ONNX_LIGHT OUTDIR MODEL...
        re-save each model with onnx-light (binary, and with external data) and
        run onnx.checker.check_model(full_check=True) on what it wrote
"""

import subprocess
import sys
import time
from pathlib import Path


def gen_text(path, nodes):
    lines = [
        '<ir_version: 10, opset_import: ["" : 21]>',
        "chain (float[N, 64] x0) => (float[N, 64] y) <float[64] c = {%s}>" % ", ".join(
            "%d.5" % i for i in range(64)
        ),
        "{",
    ]
    prev = "x0"
    for i in range(nodes):
        out = "y" if i == nodes - 1 else "t%d" % i
        k = i % 3
        if k == 0:
            lines.append("  %s = Add (%s, c)" % (out, prev))
        elif k == 1:
            lines.append('  %s = Relu <doc: string = "relu %d"> (%s)' % (out, i, prev))
        else:
            lines.append(
                "  %s = Mul <alpha: float = 0.5, axes: ints = [0, 1], mode: string = \"m\"> (%s, c)"
                % (out, prev)
            )
        prev = out
    lines.append("}")
    Path(path).write_text("\n".join(lines) + "\n")


def bench_text(path, runs):
    import onnx.parser
    import onnx.printer

    text = Path(path).read_text()
    best_parse = best_print = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        model = onnx.parser.parse_model(text)
        best_parse = min(best_parse, time.perf_counter() - t)
        t = time.perf_counter()
        onnx.printer.to_text(model)
        best_print = min(best_print, time.perf_counter() - t)
    print("nodes", len(model.graph.node), file=sys.stderr)
    print("parse_s %.4f" % best_parse)
    print("print_s %.4f" % best_print)


def bench_load(path, read=False):
    import onnx
    from onnx import numpy_helper

    t = time.perf_counter()
    model = onnx.load(path, load_external_data=True)
    secs = time.perf_counter() - t
    if read:
        # every initializer as an array, as a runtime would need it
        arrays = [numpy_helper.to_array(i) for i in model.graph.initializer]
        print("load_read_s %.4f" % (time.perf_counter() - t))
        print("tensors %d" % len(arrays))
    else:
        print("load_s %.4f" % secs)
    print("bytes %d" % sum(len(t.raw_data) for t in model.graph.initializer))


def ratios(results):
    vals = {}
    for line in Path(results).read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            vals[parts[0]] = float(parts[1])
    print("%-24s %12s %12s %10s" % ("benchmark", "onnx-light", "onnx (py)", "py/light"))
    for key in ["parse_s", "print_s", "load_s", "load_read_s"]:
        a, b = vals.get("light_" + key), vals.get("py_" + key)
        if a is None or b is None:
            continue
        print("%-24s %11.3fs %11.3fs %9.2fx" % (key[:-2], a, b, b / a if a else float("inf")))
    for key, label in [("load_rss_kb", "load peak RSS"), ("load_read_rss_kb", "load+read peak RSS")]:
        a, b = vals.get("light_" + key), vals.get("py_" + key)
        if a is not None and b is not None:
            print("%-24s %10.0fMB %10.0fMB %9.2fx" % (label, a / 1024, b / 1024, b / a))


def check(onnx_light, outdir, models):
    import onnx

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for i, model in enumerate(models):
        name = "%02d_%s" % (i, Path(model).parent.name if model.endswith("model.onnx") else Path(model).stem)
        for mode, extra in [("binary", ""), ("external", " --external-threshold 64")]:
            target = out / name / mode / "model.onnx"
            target.parent.mkdir(parents=True, exist_ok=True)
            cmd = 'load "%s"; save "%s"%s' % (model, target, extra)
            r = subprocess.run([onnx_light, "--no-color", "-c", cmd], capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %-40s %-8s onnx-light save: %s" % (name, mode, (r.stderr or r.stdout).strip()))
                failures += 1
                continue
            files = sorted(p.name for p in target.parent.iterdir())
            try:
                m = onnx.load(str(target), load_external_data=True)
                onnx.checker.check_model(m, full_check=True)
                # the checker also accepts a path (it then resolves external data itself)
                onnx.checker.check_model(str(target), full_check=True)
                print("ok   %-40s %-8s files=%s" % (name, mode, ",".join(files)))
            except Exception as e:  # report and go on
                msg = str(e).strip().splitlines()
                print("FAIL %-40s %-8s %s" % (name, mode, msg[0] if msg else type(e).__name__))
                failures += 1
    print("checker: %d failure(s)" % failures)


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "gen-text":
        gen_text(argv[2], int(argv[3]) if len(argv) > 3 else 100000)
    elif cmd == "text":
        bench_text(argv[2], int(argv[3]) if len(argv) > 3 else 3)
    elif cmd == "load":
        bench_load(argv[2], read="--read" in argv[3:])
    elif cmd == "ratios":
        ratios(argv[2])
    elif cmd == "check":
        check(argv[2], argv[3], argv[4:])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
