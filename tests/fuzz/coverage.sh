#!/bin/sh
# coverage.sh — line coverage of src/ reached by the fuzz corpora (clang source-based coverage).
#
#   tests/fuzz/coverage.sh [CORPUS_ROOT]
#
# CORPUS_ROOT holds one corpus folder per target (CORPUS_ROOT/<target>/), as tests/fuzz/run.sh
# leaves them in $WICK_FUZZ_OUT/corpus (default: build-libfuzzer/corpus). Each target also
# replays its seeds and regressions, so the numbers mean "what fuzzing from these corpora
# reaches".
#
# Environment:
#   CC                  clang (default: clang); llvm-profdata and llvm-cov from the same LLVM
#                       (Debian: apt-get install clang llvm)
#   WICK_COV_OUT        build and report directory (default: build-coverage)
#   WICK_FUZZ_TARGETS   targets to replay (default: the four of run.sh)
#
# What it does: compiles src/**/*.c and each tests/fuzz/<target>.c with
# -fprofile-instr-generate -fcoverage-mapping (no sanitizers: they do not change which lines
# run) linked against libFuzzer's driver, replays every corpus input once (-runs=0), merges the
# profiles and prints line coverage per directory of src/ (src/format is the loader and
# verifier) plus the least-covered files of src/format and src/ops. The full per-line report is
# $WICK_COV_OUT/html/index.html; `llvm-cov report` output is in $WICK_COV_OUT/report.txt.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${WICK_COV_OUT:-$ROOT/build-coverage}
CORPORA=${1:-${WICK_FUZZ_OUT:-$ROOT/build-libfuzzer}/corpus}
CC=${CC:-clang}
TARGETS=${WICK_FUZZ_TARGETS:-"fuzz_model fuzz_mutate_model fuzz_input_values fuzz_weight_cache"}
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
PROFDATA=${LLVM_PROFDATA:-llvm-profdata}
LLVMCOV=${LLVM_COV:-llvm-cov}
for tool in "$CC" "$PROFDATA" "$LLVMCOV"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "coverage.sh: $tool not found (Debian: apt-get install clang llvm)" >&2; exit 2; }
done

mkdir -p "$OUT/obj" "$OUT/gen" "$OUT/profiles"
CFLAGS="-O1 -g -std=c11 -D_POSIX_C_SOURCE=200809L -fprofile-instr-generate -fcoverage-mapping"
INC="-I$ROOT/include -I$ROOT/src -I$ROOT/tests/fuzz -I$ROOT/tests/unit -I$OUT/gen"

# ---- build ----
rm -rf "$OUT/value-seeds" "$OUT/cache-seeds" "$OUT/seeds"
"$PY" "$ROOT/tests/fuzz/make_seeds.py" "$OUT/seeds" --max-bytes "${WICK_FUZZ_SEED_MAX:-65536}" \
  --value-header "$OUT/gen/value_models.h" --value-seeds "$OUT/value-seeds" \
  --cache-header "$OUT/gen/cache_models.h" --cache-seeds "$OUT/cache-seeds" >/dev/null
OBJS=""
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
for src in $(cd "$ROOT" && find src -name '*.c' | sort | grep -Ev "^($FOREIGN)"); do
  obj="$OUT/obj/$(echo "$src" | tr '/' '_' | sed 's/\.c$/.o/')"
  extra=""
  case "$src" in
    src/kernels/avx512amx/*) extra="-mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx512vnni -mavx2 -mfma -mamx-tile -mamx-int8" ;;
    src/kernels/avx512vnni/*) extra="-mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx512vnni -mavx2 -mfma" ;;
    src/kernels/q8_select.c) extra="$AMX_DEFINE" ;; # the AMX table (as CMakeLists.txt)
    src/kernels/avx512/*) extra="-mavx512f -mavx512vl -mavx2 -mfma" ;;
    src/kernels/avx2/*) extra="-mavx2 -mfma" ;;
  esac
  if [ ! -f "$obj" ] || [ "$ROOT/$src" -nt "$obj" ] || [ -n "$(find "$ROOT/src" -name '*.h' -newer "$obj" | head -1)" ] || [ "$ROOT/src/ops/op_table.inc" -nt "$obj" ]; then
    # shellcheck disable=SC2086
    $CC $CFLAGS $extra $INC -c "$ROOT/$src" -o "$obj"
  fi
  OBJS="$OBJS $obj"
done
for t in $TARGETS; do
  # shellcheck disable=SC2086
  $CC $CFLAGS -fsanitize=fuzzer $INC "$ROOT/tests/fuzz/$t.c" $OBJS -lm -lpthread -o "$OUT/$t"
done

# ---- replay ----
rm -f "$OUT/profiles"/*.profraw
OBJECTS=""
for t in $TARGETS; do
  case "$t" in
    fuzz_input_values) dirs="$OUT/value-seeds $ROOT/tests/fuzz/value-regressions" ;;
    fuzz_weight_cache) dirs="$OUT/cache-seeds $ROOT/tests/fuzz/cache-regressions" ;;
    *) dirs="$OUT/seeds $ROOT/tests/fuzz/regressions" ;;
  esac
  [ -d "$CORPORA/$t" ] && dirs="$CORPORA/$t $dirs"
  n=0
  for d in $dirs; do n=$((n + $(ls "$d" | wc -l))); done
  echo "coverage.sh: $t replays $n inputs ($dirs)"
  # shellcheck disable=SC2086
  LLVM_PROFILE_FILE="$OUT/profiles/$t-%p.profraw" WICK_FUZZ_MAX_MACS=${WICK_FUZZ_MAX_MACS:-50000000} \
    "$OUT/$t" -runs=0 -timeout=60 -rss_limit_mb=4096 $dirs >"$OUT/$t.replay.log" 2>&1 ||
    echo "coverage.sh: $t stopped early (see $OUT/$t.replay.log)" >&2
  OBJECTS="$OBJECTS -object $OUT/$t"
done
"$PROFDATA" merge -sparse "$OUT/profiles"/*.profraw -o "$OUT/merged.profdata"

# ---- report ----
OBJECTS=${OBJECTS# -object }
# shellcheck disable=SC2086
"$LLVMCOV" report $OBJECTS -instr-profile="$OUT/merged.profdata" "$ROOT/src" >"$OUT/report.txt"
# shellcheck disable=SC2086
"$LLVMCOV" show $OBJECTS -instr-profile="$OUT/merged.profdata" -format=html \
  -output-dir="$OUT/html" "$ROOT/src" >/dev/null
# shellcheck disable=SC2086
"$LLVMCOV" export -summary-only $OBJECTS -instr-profile="$OUT/merged.profdata" "$ROOT/src" \
  >"$OUT/summary.json"
"$PY" - "$OUT/summary.json" "$ROOT" <<'EOF'
import json, sys, collections
data = json.load(open(sys.argv[1]))["data"][0]["files"]
root = sys.argv[2].rstrip("/") + "/"
dirs = collections.defaultdict(lambda: [0, 0])
files = []
for f in data:
    name = f["filename"].replace(root, "")
    if not name.startswith("src/"):
        continue
    lines = f["summary"]["lines"]
    d = "/".join(name.split("/")[:2])  # src/format, src/ops, src/core, src/kernels
    for key in (d, "src (all)"):
        dirs[key][0] += lines["covered"]
        dirs[key][1] += lines["count"]
    files.append((name, lines["covered"], lines["count"]))
print("line coverage by directory (covered / lines):")
for d in sorted(dirs):
    c, n = dirs[d]
    print(f"  {d:28s} {100.0 * c / max(n, 1):6.2f} %   {c:6d} / {n}")
for prefix in ("src/format/", "src/ops/"):
    worst = sorted((c / max(n, 1), name, c, n) for name, c, n in files if name.startswith(prefix))[:8]
    print(f"least covered in {prefix}:")
    for frac, name, c, n in worst:
        print(f"  {name:44s} {100 * frac:6.2f} %   {c} / {n}")
EOF
echo "coverage.sh: per-line report $OUT/html/index.html"
