#!/usr/bin/env bash
# The torchaudio rows' own virtual environment (.venv-torchaudio): torchaudio pins its exact
# torch and has no release for wick's torch 2.14.1, so these rows convert under torch 2.9.1
# (bench/coverage/requirements-torchaudio.txt; about 7 GB, torch's CUDA build from PyPI).
# wick is not installed there: the matrix runs the tree's python/ and build/libwick.so.
# Usage: bash bench/coverage/setup_torchaudio.sh   (idempotent; logs to build/torchaudio-setup.log)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-torchaudio
PY=${PYTHON:-python3}
mkdir -p build
LOG=build/torchaudio-setup.log
test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >"$LOG" 2>&1 || true
if "$VENV/bin/python" -m pip install -r bench/coverage/requirements-torchaudio.txt >>"$LOG" 2>&1; then
  "$VENV/bin/python" -c "import torch, torchaudio; print('torchaudio', torchaudio.__version__, 'torch', torch.__version__)" 2>&1 | tee -a "$LOG"
else
  echo "torchaudio venv install FAILED; see $LOG:" >&2
  grep -E "^ERROR" "$LOG" | tail -5 >&2
  exit 1
fi
