#!/usr/bin/env bash
# The litert-torch peer's own virtual environment (.venv-litert-torch): litert-torch pulls in
# JAX, litert-converter, ai-edge-quantizer, torchao, ... which must not leak into wick's .venv.
# Same torch/torchvision/transformers/timm pins as .venv so both sides see the same models.
# Usage: bash bench/coverage/setup_litert_torch.sh   (idempotent; logs to build/litert-torch-setup.log)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-litert-torch
PY=${PYTHON:-python3}
mkdir -p build
LOG=build/litert-torch-setup.log
test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >"$LOG" 2>&1 || true
if "$VENV/bin/python" -m pip install \
    "litert-torch==0.10.0" \
    "torch==2.14.1" "torchvision==0.29.1" \
    "transformers==5.23.0" "timm==1.0.31" >>"$LOG" 2>&1; then
  "$VENV/bin/python" -c "import litert_torch, torch; print('litert-torch OK, torch', torch.__version__)" 2>&1 | tee -a "$LOG"
else
  echo "litert-torch install FAILED; see $LOG:" >&2
  grep -E "^ERROR" "$LOG" | tail -5 >&2
  exit 1
fi
