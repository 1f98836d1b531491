#!/usr/bin/env bash
# wheel_smoke.sh [PYTHON] — the front door as a user meets it: builds the wick wheel
# (`pip wheel`: pyproject.toml's scikit-build-core runs CMakeLists.txt, so the wheel
# carries libwick.so and the C `wick` tool), installs it into a fresh virtual environment
# with binaries only (nothing is compiled at install time; torch is not installed), then
# checks the runtime from Python (wheel_smoke.py: write a small model without torch, load
# it, run it) and the `wick` command on it: inspect, run, bench, graph, and `wick convert`'s
# message naming `pip install "wick[convert]"`. Run by .ci/run after `make test`.
#
# PYTHON (default python3) makes the environment. CMAKE_BUILD_PARALLEL_LEVEL (default 1)
# sets the build's jobs. Prints the wheel's size and the build and install times.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${1:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1}
# What the user has: no WICK_LIBRARY, no PYTHONPATH into the checkout.
unset WICK_LIBRARY PYTHONPATH

fail() {
  echo "wheel smoke: FAILED: $*" >&2
  exit 1
}

"$python" -m venv "$tmp/venv"
venv=$tmp/venv/bin

# Build (pip fetches the pinned build backend into an isolated build environment; the
# venv itself gets nothing from this step).
start=$SECONDS
"$venv/pip" wheel --no-deps -w "$tmp/dist" "$root" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "pip wheel"; }
build_s=$((SECONDS - start))
wheel=$(ls "$tmp"/dist/wick-*.whl)
wheel_kib=$(($(stat -c %s "$wheel") / 1024))

# Install: binaries only, so a machine without a compiler installs it the same way.
start=$SECONDS
"$venv/pip" install --only-binary=:all: "$wheel" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "pip install"; }
install_s=$((SECONDS - start))
if "$venv/python" -c 'import torch' 2>/dev/null; then
  fail "torch is installed: \`pip install wick\` must not bring it"
fi

cd "$tmp" # (not the checkout: `import wick` must find the installed package)
"$venv/python" "$here/wheel_smoke.py" "$tmp/smoke.tflite"
# The converter's unary and binary lowering rules come from the runtime's records, installed in
# wick/_data.
"$venv/python" -c 'from wick.tflite import unary_ops as u; assert "_data" in str(u.path()), u.path(); assert u.unary_ops()' ||
  fail "the wheel lacks wick/_data/unary_ops.inc"
"$venv/python" -c 'from wick.tflite import binary_ops as b; assert "_data" in str(b.path()), b.path(); assert b.arithmetic_ops()' ||
  fail "the wheel lacks wick/_data/binary_ops.inc"

"$venv/wick" version | grep -q '^wick ' || fail "wick version"
"$venv/wick" inspect smoke.tflite >inspect.txt || fail "wick inspect"
grep -q 'CONV_2D' inspect.txt || { cat inspect.txt; fail "wick inspect lists no CONV_2D"; }
"$venv/wick" run smoke.tflite --output-dir out >/dev/null || fail "wick run"
ls out/*.npy >/dev/null 2>&1 || fail "wick run wrote no .npy output"
"$venv/wick" bench smoke.tflite --runs 3 --warmup 1 >/dev/null || fail "wick bench"
"$venv/wick" graph smoke.tflite -o smoke.html >/dev/null || fail "wick graph"
test -s smoke.html || fail "wick graph wrote no page"
# The converter needs torch: one clear message and exit status 1, no traceback.
status=0
"$venv/wick" convert torchvision.models:mobilenet_v2 --input 1x3x8x8 2>convert.err || status=$?
[ "$status" = 1 ] || { cat convert.err; fail "wick convert without torch exited $status, not 1"; }
grep -q 'pip install "wick\[convert\]"' convert.err ||
  { cat convert.err; fail "wick convert without torch does not name wick[convert]"; }
if grep -q Traceback convert.err; then cat convert.err; fail "wick convert printed a traceback"; fi

echo "wheel smoke: ok ($(basename "$wheel"): ${wheel_kib} KiB; build ${build_s} s at" \
  "${CMAKE_BUILD_PARALLEL_LEVEL} job(s), install ${install_s} s; without torch: wick.load and a" \
  "run, wick inspect, run, bench, graph, and convert's message)"
