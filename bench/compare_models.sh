#!/bin/sh
# compare_models.sh — single-thread latency of .tflite files on wick and on LiteRT (XNNPACK),
# measured back to back in one session (the machines are shared: compare runs from the same
# invocation, and prefer a quiet moment — `uptime` load well under the core count).
#
#   bench/compare_models.sh build-perf build/model-cache/mobilenet_v2-s0-*.tflite ...
#
# Prints, per model: wick's optimized kernels (`wick bench --runs 20`), wick's reference kernels
# (`--reference`, 3 runs: slow), and LiteRT (bench/litert_bench.py, 20 runs).
set -eu
build=$1
shift
here=$(dirname "$0")
python=${PYTHON:-.venv/bin/python}
echo "load: $(uptime | sed 's/.*load average: //')"
for model in "$@"; do
  echo "== $(basename "$model")"
  "$build/wick" bench "$model" --runs 20 | grep -E '^(cold start|min|median)' | sed 's/^/wick        /'
  "$build/wick" bench "$model" --runs 3 --warmup 1 --reference | grep -E '^median' |
    sed 's/^/wick (ref)  /'
  "$python" "$here/litert_bench.py" "$model" --runs 20 2>/dev/null | sed 's/^.*: /litert      /'
done
