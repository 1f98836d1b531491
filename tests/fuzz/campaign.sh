#!/bin/bash
# campaign.sh — a long fuzzing campaign: run.sh's targets in chunks at the lowest CPU priority
# until told to stop, with a ledger of every chunk's executions and CPU time.
#
#   tests/fuzz/campaign.sh [CHUNK_SECONDS] [WORKERS]   default 300 s chunks, one worker per core
#   tests/fuzz/campaign.sh --summary [LEDGER]          totals per target from a ledger
#
# Environment: as run.sh (WICK_FUZZ_OUT, WICK_FUZZ_TARGETS, CC, ...), plus
#   WICK_FUZZ_UNTIL   stop starting chunks after this time (anything `date -d` reads)
#   WICK_FUZZ_TIMEOUT seconds of wall clock one input may take; default 60 here, not run.sh's
#                     10: at nice 19 the fuzzer gets ~1.5 % of a core while other work runs, so
#                     an input that takes 1 s of CPU can take a minute of wall clock
#
# Worker w fuzzes targets w, w+WORKERS, ... of the target list in turn, so no target runs twice
# at once (each keeps its corpus in $WICK_FUZZ_OUT/corpus/<target>). Every chunk appends one
# line to $WICK_FUZZ_OUT/campaign.log:
#
#   <UTC end time> <target> <executions> <CPU seconds> <findings>
#
# A chunk with findings keeps its libFuzzer log as $WICK_FUZZ_OUT/findings/<target>-<time>.log
# (the input is in $WICK_FUZZ_OUT/artifacts/). `touch $WICK_FUZZ_OUT/STOP` ends the campaign
# after the running chunks.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${WICK_FUZZ_OUT:-$ROOT/build-libfuzzer}
export WICK_FUZZ_OUT=$OUT
LEDGER=$OUT/campaign.log

summary() {
  awk '{ n[$2] += $3; cpu[$2] += $4; f[$2] += $5; chunks[$2]++ }
       END {
         for (t in n) {
           printf "%-20s %12d executions %8.2f CPU-h %6d chunks %3d findings\n",
                  t, n[t], cpu[t] / 3600, chunks[t], f[t]
           N += n[t]; C += cpu[t]; F += f[t]
         }
         printf "%-20s %12d executions %8.2f CPU-h %13s %3d findings\n", "all", N, C / 3600, "", F
       }' "$1"
}

if [ "${1:-}" = --summary ]; then
  summary "${2:-$LEDGER}"
  exit 0
fi

CHUNK=${1:-300}
export WICK_FUZZ_TIMEOUT=${WICK_FUZZ_TIMEOUT:-60}
WORKERS=${2:-$(nproc)}
read -r -a TARGETS <<<"${WICK_FUZZ_TARGETS:-fuzz_model fuzz_mutate_model fuzz_input_values fuzz_weight_cache}"
UNTIL=0
[ -n "${WICK_FUZZ_UNTIL:-}" ] && UNTIL=$(date -d "$WICK_FUZZ_UNTIL" +%s)

# Build once (the regressions are replayed by the test suite and by a plain run.sh).
WICK_FUZZ_BUILD_ONLY=1 "$ROOT/tests/fuzz/run.sh" || { echo "campaign.sh: building failed" >&2; exit 1; }
mkdir -p "$OUT/findings"
rm -f "$OUT/STOP"

worker() {
  local i=$1 t cpu execs findings line
  while [ ! -e "$OUT/STOP" ] && { [ "$UNTIL" = 0 ] || [ "$(date +%s)" -lt "$UNTIL" ]; }; do
    t=${TARGETS[$((i % ${#TARGETS[@]}))]}
    i=$((i + WORKERS))
    # `times` in the subshell reports its children's CPU time: the fuzzer's.
    cpu=$( (WICK_FUZZ_FUZZ_ONLY=1 WICK_FUZZ_TARGETS=$t nice -n 19 "$ROOT/tests/fuzz/run.sh" "$CHUNK" \
      >"$OUT/campaign-$t.out" 2>&1; times) | awk 'NR == 2 {
        split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
    line=$(grep "^run.sh: $t:" "$OUT/campaign-$t.out")
    execs=$(echo "$line" | sed -n 's/.*: \([0-9]*\) executions.*/\1/p')
    findings=$(echo "$line" | sed -n 's/.*findings \([0-9]*\).*/\1/p')
    [ "${findings:-0}" = 0 ] || cp "$OUT/$t.log" "$OUT/findings/$t-$(date -u +%Y%m%dT%H%M%S).log"
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $t ${execs:-0} ${cpu:-0} ${findings:-0}" >>"$LEDGER"
  done
}

for ((w = 0; w < WORKERS; w++)); do worker "$w" & done
wait
summary "$LEDGER"
