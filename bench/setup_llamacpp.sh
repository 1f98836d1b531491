#!/usr/bin/env bash
# setup_llamacpp.sh — the llama.cpp peer of bench/llm_peers.py (`make bench-llm`): llama-cpp-python
# built from source (its sdist vendors llama.cpp) in its own virtual environment, outside the repo:
#
#   bash bench/setup_llamacpp.sh [PYTHON]     # ~40 min at one build job on 2 cores
#
# Layout ($WICK_LLAMACPP_DIR, default ~/.cache/wick/llm/llamacpp):
#   venv/                          python -m venv, llama-cpp-python installed
#   sdist/llama_cpp_python-V.tar.gz  the source, from the package index (pip download)
#   llama_cpp_python-V/            the source unpacked: bench/llm_peers.py runs its
#                                  vendor/llama.cpp/convert_hf_to_gguf.py to make the GGUF files
#
# GGML_NATIVE=OFF with the ISA flags this CPU has (AVX2 + FMA + F16C + BMI2; AVX-512 F / VNNI /
# BF16 / VBMI when present); never AMX (llama.cpp's AMX path crashed on the team's AMX machine).
# The multimodal library (LLAVA_BUILD) is not built. Build jobs: $JOBS (default 1), at nice 19.
# Does nothing when the venv already imports llama_cpp.
set -euo pipefail
VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
DIR=${WICK_LLAMACPP_DIR:-$HOME/.cache/wick/llm/llamacpp}
PYTHON=${1:-python3}
if [ -x "$DIR/venv/bin/python" ] && "$DIR/venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  echo "llama.cpp venv ready: $DIR/venv"
  exit 0
fi
mkdir -p "$DIR/sdist"
"$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/pip" install -q --upgrade pip
SDIST="$DIR/sdist/llama_cpp_python-$VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then
  "$DIR/venv/bin/pip" download --no-binary :all: --no-deps --no-cache-dir -d "$DIR/sdist" \
    "llama-cpp-python==$VERSION"
fi
tar xzf "$SDIST" -C "$DIR"

flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }
ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
for f in avx avx2 fma f16c bmi2; do
  has "$f" && ARGS="$ARGS -DGGML_${f^^}=ON"
done
has avx512f && ARGS="$ARGS -DGGML_AVX512=ON"
has avx512_vnni && ARGS="$ARGS -DGGML_AVX512_VNNI=ON"
has avx512_bf16 && ARGS="$ARGS -DGGML_AVX512_BF16=ON"
has avx512vbmi && ARGS="$ARGS -DGGML_AVX512_VBMI=ON"
echo "building llama-cpp-python $VERSION: $ARGS"
CMAKE_ARGS="$ARGS" CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-1} \
  nice -n 19 "$DIR/venv/bin/pip" install --no-cache-dir "$SDIST"
"$DIR/venv/bin/python" -c 'import llama_cpp; print("llama.cpp venv ready:", llama_cpp.__version__)'
