#!/bin/sh
# run.sh — build wick's libFuzzer targets and fuzz each for N seconds.
#
#   tests/fuzz/run.sh [SECONDS]          default 60 per target
#
# Environment:
#   CC                    clang with libFuzzer (default: clang). Debian: apt-get install clang
#   WICK_FUZZ_OUT         build/corpus/artifact directory (default: build-libfuzzer)
#   WICK_FUZZ_TARGETS     targets to run (default: "fuzz_model fuzz_mutate_model fuzz_input_values
#                         fuzz_weight_cache")
#   WICK_FUZZ_JOBS        run the targets in parallel when 1 (default: 0, one after another)
#   WICK_FUZZ_EXTRA       extra libFuzzer flags (e.g. "-max_len=8192")
#   WICK_FUZZ_TIMEOUT     libFuzzer's -timeout: wall-clock seconds one input may take (default 10)
#   WICK_FUZZ_BUILD_ONLY  1: stop after building the targets and the seeds (steps 1-2)
#   WICK_FUZZ_FUZZ_ONLY   1: skip steps 1-3 and fuzz the targets built by an earlier run
#                         (tests/fuzz/campaign.sh runs chunk after chunk this way)
#   WICK_FUZZ_BUILD_JOBS  compilers run at once (default 2)
#   WICK_NNAPI_LIBRARY    the NNAPI library every other input also runs with, through the NNAPI
#                         delegate (default: the test NNAPI implementation of tests/nnapi/,
#                         built here; empty: no NNAPI runs)
#   WICK_FUZZ_SEED_MAX    largest seed model copied from shared/models (default 65536 bytes:
#                         big models run for seconds each under ASan and starve the fuzzer;
#                         test_malformed mutates them systematically instead)
#
# What it does:
#   1. generates the fixed models of fuzz_input_values ($OUT/gen/value_models.h) and of
#      fuzz_weight_cache ($OUT/gen/cache_models.h) and the seed corpus (make_seeds.py: the
#      shared real models + tiny writer models for the file targets, one valid-values input
#      per model for fuzz_input_values, two-byte cache-file seeds for fuzz_weight_cache);
#   2. compiles all of src/**/*.c with -fsanitize=fuzzer-no-link,address,undefined once, and
#      links each tests/fuzz/<target>.c against them with -fsanitize=fuzzer,address,undefined;
#   3. replays tests/fuzz/regressions/* through the file targets and
#      tests/fuzz/value-regressions/* through fuzz_input_values and
#      tests/fuzz/cache-regressions/* through fuzz_weight_cache (fails on any finding);
#   4. fuzzes each target for SECONDS with -rss_limit_mb=2048, -timeout=$WICK_FUZZ_TIMEOUT and the
#      dictionary, keeping its growing corpus in $OUT/corpus/<target> (reused by the next run) and any
#      crash in $OUT/artifacts/<target>-crash-*;
#   5. prints one line per target: executions, exec/s, corpus size, findings.
# A finding makes the script exit 1. Turn each into a regression: minimise it
# ($OUT/<target> -minimize_crash=1 -runs=10000 FILE), fix the bug, then copy the file into
# tests/fuzz/regressions/ (test_malformed replays that folder too).
set -eu

SECONDS_PER_TARGET=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${WICK_FUZZ_OUT:-$ROOT/build-libfuzzer}
CC=${CC:-clang}
TARGETS=${WICK_FUZZ_TARGETS:-"fuzz_model fuzz_mutate_model fuzz_input_values fuzz_weight_cache"}
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3

if ! command -v "$CC" >/dev/null 2>&1; then
  echo "run.sh: $CC not found (Debian: apt-get install clang)" >&2
  exit 2
fi

mkdir -p "$OUT/obj" "$OUT/seeds" "$OUT/artifacts" "$OUT/gen"
REG="$ROOT/tests/fuzz/regressions"
VREG="$ROOT/tests/fuzz/value-regressions"
CREG="$ROOT/tests/fuzz/cache-regressions"
status=0
# The test NNAPI implementation (tests/nnapi/, built in step 2): with it every other input also
# runs through the NNAPI delegate (fuzz_common.h). WICK_NNAPI_LIBRARY= (empty) turns that off.
export WICK_NNAPI_LIBRARY="${WICK_NNAPI_LIBRARY-$OUT/libwick_test_nnapi.so}"
if [ "${WICK_FUZZ_FUZZ_ONLY:-0}" != 1 ]; then
SAN="address,undefined"
CFLAGS="-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -fno-omit-frame-pointer -fno-sanitize-recover=all"
INC="-I$ROOT/include -I$ROOT/src -I$ROOT/tests/fuzz -I$ROOT/tests/unit"

# ---- 1. seeds and the generated value models ----
rm -rf "$OUT/seeds" "$OUT/value-seeds" "$OUT/cache-seeds" && mkdir -p "$OUT/seeds"
if ! "$PY" "$ROOT/tests/fuzz/make_seeds.py" "$OUT/seeds" --max-bytes "${WICK_FUZZ_SEED_MAX:-65536}" \
    --value-header "$OUT/gen/value_models.h" --value-seeds "$OUT/value-seeds" \
    --cache-header "$OUT/gen/cache_models.h" --cache-seeds "$OUT/cache-seeds"; then
  echo "run.sh: make_seeds.py failed; fuzzing from the regressions and built-in models only," \
    "without fuzz_input_values and fuzz_weight_cache (they need the generated models)" >&2
  TARGETS=$(echo "$TARGETS" | sed 's/fuzz_input_values//; s/fuzz_weight_cache//')
fi

# ---- 2. build (objects are rebuilt only when their source is newer) ----
echo "run.sh: building with $($CC --version | head -1)"
OBJS=""
JOBS=${WICK_FUZZ_BUILD_JOBS:-2}
# One line per object to (re)build: source, object, ISA flags. xargs -P runs them, a new compile
# starting as soon as any ends (one slow file does not hold the others).
COMPILES="$OUT/compiles.txt"
: >"$COMPILES"
# AMX-INT8 kernels where the compiler knows the intrinsics (as CMakeLists.txt): without
# WICK_HAVE_AMX q8_select.c has no AMX table and AMX CPUs would fuzz the VNNI kernels instead.
AMX_DEFINE=""
if echo 'int main(void){return 0;}' | $CC -mamx-tile -mamx-int8 -x c -c -o /dev/null - 2>/dev/null; then
  AMX_DEFINE="-DWICK_HAVE_AMX=1"
fi
case "$(uname -m)" in  # kernels for another ISA are not built (as in CMakeLists.txt)
  x86_64 | i?86) FOREIGN="src/kernels/neon" ;;  # neon/ and neondot/
  aarch64 | arm64) FOREIGN="src/kernels/avx" ;;
  *) FOREIGN="src/kernels/neon|src/kernels/avx" ;;
esac
# The depthwise templates' instantiations take minutes each under the sanitizers: start them first.
SOURCES=$(cd "$ROOT" && find src -name '*.c' | sort | grep -Ev "^($FOREIGN)")
SOURCES="$(echo "$SOURCES" | grep '/dwconv\.c$') $(echo "$SOURCES" | grep -v '/dwconv\.c$')"
for src in $SOURCES; do
  obj="$OUT/obj/$(echo "$src" | tr '/' '_' | sed 's/\.c$/.o/')"
  extra=""
  case "$src" in
    src/kernels/avx512amx/*) extra="-mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx512vnni -mavx2 -mfma -mamx-tile -mamx-int8" ;;
    src/kernels/avx512vnni/*) extra="-mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx512vnni -mavx2 -mfma" ;;
    src/kernels/q8_select.c) extra="$AMX_DEFINE" ;; # the AMX table (as CMakeLists.txt)
    src/kernels/avx512/*) extra="-mavx512f -mavx512vl -mavx2 -mfma" ;;
    src/kernels/avx2/*) extra="-mavx2 -mfma" ;;
    src/kernels/neon*/*) continue ;; # AArch64 only (this script builds for the host)
  esac
  if [ ! -f "$obj" ] || [ "$ROOT/$src" -nt "$obj" ] || [ -n "$(find "$ROOT/src" -name '*.h' -newer "$obj" | head -1)" ] || [ "$ROOT/src/ops/op_table.inc" -nt "$obj" ]; then
    echo "$ROOT/$src $obj${extra:+ $extra}" >>"$COMPILES" # no trailing blank: xargs -L joins lines
  fi
  OBJS="$OBJS $obj"
done
export CC CFLAGS SAN INC
# shellcheck disable=SC2016
if ! xargs -r -P "$JOBS" -L 1 sh -c 'src=$1 obj=$2; shift 2
    $CC $CFLAGS "$@" -fsanitize=fuzzer-no-link,$SAN $INC -c "$src" -o "$obj"' sh <"$COMPILES"; then
  echo "run.sh: compiling src/ failed" >&2
  exit 1
fi
for t in $TARGETS; do
  # shellcheck disable=SC2086
  $CC $CFLAGS -fsanitize=fuzzer,$SAN $INC -I"$OUT/gen" "$ROOT/tests/fuzz/$t.c" $OBJS -lm -lpthread -ldl -o "$OUT/$t"
done
# shellcheck disable=SC2086
# (every file of the test runtime: test_nnapi*.c but the C test)
# shellcheck disable=SC2046
$CC $CFLAGS -fsanitize=$SAN -shared -fPIC -I"$ROOT/src" $(ls "$ROOT"/tests/nnapi/test_nnapi*.c |
  grep -v test_nnapi_delegate.c) -lm -lpthread -o "$OUT/libwick_test_nnapi.so"

[ "${WICK_FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# ---- 3. regressions ----
for t in $TARGETS; do
  case "$t" in fuzz_input_values) dir=$VREG ;; fuzz_weight_cache) dir=$CREG ;; *) dir=$REG ;; esac
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] || continue
  if ! "$OUT/$t" -rss_limit_mb=2048 -timeout="${WICK_FUZZ_TIMEOUT:-10}" "$dir"/* >"$OUT/$t.regressions.log" 2>&1; then
    echo "run.sh: $t FAILS on a regression input; see $OUT/$t.regressions.log" >&2
    status=1
  fi
  echo "run.sh: $t replayed $(ls "$dir" | wc -l) regression inputs from $dir"
done

fi # steps 1-3

# ---- 4. fuzz ----
fuzz_one() {
  t=$1
  mkdir -p "$OUT/corpus/$t"
  case "$t" in
    fuzz_mutate_model) maxlen=262144 seeds="$OUT/seeds $REG" ;;  # whole valid models, mutated in place
    fuzz_input_values) maxlen=4096 seeds="$OUT/value-seeds $VREG" ;;
    fuzz_weight_cache) maxlen=16384 seeds="$OUT/cache-seeds $CREG" ;;
    *) maxlen=65536 seeds="$OUT/seeds $REG" ;;
  esac
  # shellcheck disable=SC2086
  "$OUT/$t" "$OUT/corpus/$t" $seeds \
    -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout="${WICK_FUZZ_TIMEOUT:-10}" \
    -max_len=$maxlen -dict="$ROOT/tests/fuzz/tflite.dict" -print_final_stats=1 \
    -artifact_prefix="$OUT/artifacts/$t-" ${WICK_FUZZ_EXTRA:-} >"$OUT/$t.log" 2>&1 || true
}

if [ "${WICK_FUZZ_JOBS:-0}" = 1 ]; then
  for t in $TARGETS; do fuzz_one "$t" & done
  wait
else
  for t in $TARGETS; do fuzz_one "$t"; done
fi

# ---- 5. report ----
for t in $TARGETS; do
  log="$OUT/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(ls "$OUT/corpus/$t" | wc -l)
  findings=$(grep -c -E '^==[0-9]+==ERROR|runtime error|^SUMMARY: libFuzzer|promise broken' "$log" || true)
  echo "run.sh: $t: ${execs:-?} executions, ${rate:-?} exec/s, corpus $corpus, findings $findings (log $log)"
  if [ "$findings" != 0 ]; then
    grep -E 'Test unit written to|^SUMMARY' "$log" | head -5
    status=1
  fi
done
exit $status
