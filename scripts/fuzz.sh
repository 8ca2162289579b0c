#!/usr/bin/env bash
# Runs one libFuzzer target of fuzz/ for SECONDS (default 60).
#
#   scripts/fuzz.sh TARGET [SECONDS] [JOBS]
#   targets: proto_load text_parse dim_expr tensor_expr command_line
#
# Works on the stable toolchain: RUSTC_BOOTSTRAP=1 unlocks the sanitizer
# flags cargo-fuzz would pass on nightly (AddressSanitizer + SanitizerCoverage).
# The corpus grows in fuzz/corpus/TARGET (not committed), starting from
# fuzz/seeds/TARGET; crashes land in fuzz/artifacts/TARGET and make this
# script fail. Every crash found is kept in fuzz/regressions/TARGET: those
# inputs run first (and by `cargo test`, in tests/suite/fuzz_regressions.rs).
# SECONDS=0 runs the regressions only.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}
secs=${2:-60}
triple=$(rustc -vV | sed -n 's/^host: //p')
export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="--cfg fuzzing -Zsanitizer=address -Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cdebug-assertions -Coverflow-checks"
cargo build --quiet --release --manifest-path fuzz/Cargo.toml --target "$triple" --bin "$target"
bin=fuzz/target/$triple/release/$target
corpus=fuzz/corpus/$target
artifacts=fuzz/artifacts/$target
mkdir -p "$corpus" "$artifacts"
seeds=()
[ -d "fuzz/seeds/$target" ] && seeds=("fuzz/seeds/$target")
# models under 64 KiB from the test fixtures seed the protobuf loader
if [ "$target" = proto_load ]; then
  find tests/fixtures -name '*.onnx' -size -64k -exec cp -n {} "$corpus/" \; 2>/dev/null || true
fi
export ASAN_OPTIONS=detect_leaks=0
if compgen -G "fuzz/regressions/$target/*" >/dev/null; then
  "$bin" -rss_limit_mb=4096 -timeout=20 fuzz/regressions/"$target"/*
fi
[ "$secs" = 0 ] && exit 0
"$bin" "$corpus" "${seeds[@]}" \
  -artifact_prefix="$artifacts/" -max_total_time="$secs" -rss_limit_mb=4096 \
  -timeout=20 -max_len=65536 -print_final_stats=1
