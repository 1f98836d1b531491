#!/usr/bin/env bash
# The ExecuTorch peer's own virtual environment (.venv-executorch) for `make bench`
# (bench/peers): executorch pulls in coremltools, pandas, scikit-learn, hydra, tokenizers, ...
# which must not leak into wick's .venv. Same torch pin as .venv, so the torch.export programs
# (.pt2) that the harness writes in .venv load here unchanged (the models are exported once,
# on the wick side, and only lowered to XNNPACK here).
# Usage: bash bench/peers/setup_executorch.sh   (idempotent; logs to build/executorch-setup.log)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-executorch
PY=${PYTHON:-python3}
PINS=("executorch==1.5.1" "torch==2.14.1" "torchao==0.18.0")
mkdir -p build
LOG=build/executorch-setup.log
check() {
  "$VENV/bin/python" - <<'PY'
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner  # noqa: F401
from executorch.runtime import Runtime  # noqa: F401
import executorch.version as v
print("executorch OK:", v.__version__, "torch", torch.__version__)
PY
}
test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
if check >"$LOG.check" 2>&1; then
  grep "executorch OK" "$LOG.check"
  exit 0
fi
"$VENV/bin/python" -m pip install -q --upgrade pip >>"$LOG" 2>&1 || true
if "$VENV/bin/python" -m pip install "${PINS[@]}" >>"$LOG" 2>&1 && check >>"$LOG" 2>&1; then
  grep "executorch OK" "$LOG" | tail -1
  exit 0
fi
echo "executorch install FAILED; see $LOG:" >&2
grep -E "^ERROR|Error" "$LOG" | tail -5 >&2
exit 1
