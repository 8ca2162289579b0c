#!/usr/bin/env bash
# I/O benchmarks: onnx-light against the Python `onnx` package, in one run.
#
# Run from the crate root:
#     scripts/bench_io.sh            # 100,000-node text model, 1 GiB external-data model
#     NODES=20000 MIB=256 scripts/bench_io.sh
# Environment:
#     PYTHON      python with onnx installed   (default python3)
#     CARGO_TARGET_DIR                         (default target)
#     WORK        scratch folder (default: a new temp dir, removed at the end;
#                 needs about MIB MiB of disk)
#     NODES MIB TENSORS RUNS                   sizes and repetitions
# Prints each side's timings, then "py/light" ratios (> 1: onnx-light is faster)
# and the peak RSS of each loader, from /usr/bin/time -v. "load" is the
# load alone (onnx-light maps external data and reads it lazily); "load_read"
# also decodes every initializer into an array, as a runtime needs it.
# Not a test: timings depend on the machine and its load.
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${NODES:-100000}
MIB=${MIB:-1024}
TENSORS=${TENSORS:-4}
RUNS=${RUNS:-3}
PYTHON=${PYTHON:-python3}
[ -x "$PYTHON" ] || PYTHON=python3
TARGET=${CARGO_TARGET_DIR:-target}
if [ -z "${WORK:-}" ]; then
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
RES="$WORK/results.txt"
: > "$RES"

cargo build --release --examples -q
BENCH_TEXT="$TARGET/release/examples/bench_text"
BENCH_IO="$TARGET/release/examples/bench_io"

echo "== (a) text: $NODES nodes, best of $RUNS"
"$PYTHON" scripts/bench_io.py gen-text "$WORK/chain.txt" "$NODES"
echo "-- onnx-light"
"$BENCH_TEXT" "$WORK/chain.txt" "$RUNS" | tee /dev/stderr | sed 's/^/light_/' >> "$RES"
echo "-- onnx.parser / onnx.printer"
"$PYTHON" scripts/bench_io.py text "$WORK/chain.txt" "$RUNS" | tee /dev/stderr | sed 's/^/py_/' >> "$RES"

echo "== (b) load: $MIB MiB in $TENSORS initializers, external data (written by onnx-light)"
"$BENCH_IO" gen "$WORK/big" "$MIB" "$TENSORS" > /dev/null
cat "$WORK/big/big.onnx.data" > /dev/null   # both sides start from a warm page cache
rss() { grep "Maximum resident" "$1" | awk '{print $NF}'; }
for mode in load load_read; do
    flag=""; [ "$mode" = load_read ] && flag="--read"
    echo "-- onnx-light load_model $flag"
    /usr/bin/time -v -o "$WORK/time_light" "$BENCH_IO" load "$WORK/big/big.onnx" $flag | tee /dev/stderr | grep "${mode}_s" | sed 's/^/light_/' >> "$RES"
    echo "light_${mode}_rss_kb $(rss "$WORK/time_light")" | tee -a "$RES"
    echo "-- onnx.load(load_external_data=True) $flag"
    /usr/bin/time -v -o "$WORK/time_py" "$PYTHON" scripts/bench_io.py load "$WORK/big/big.onnx" $flag | tee /dev/stderr | grep "${mode}_s" | sed 's/^/py_/' >> "$RES"
    echo "py_${mode}_rss_kb $(rss "$WORK/time_py")" | tee -a "$RES"
done

echo "== ratios"
"$PYTHON" scripts/bench_io.py ratios "$RES"
