# Makefile — the project's front door. Two commands matter to a new user:
#
#   make demo    set up, then convert a built-in PyTorch model and run it on wick
#   make test    set up, then run the whole test suite (C and Python)
#
# Everything else (build, setup, asan, lint, format) is a step of those.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
JOBS ?= $(shell nproc)

.PHONY: all build setup demo test test-c test-python test-wheel test-aarch64 asan lint format \
  format-check format-c clean conformance op-sweep bench-llm

all: build

# Release build of libwick, the CLI and the C tests.
build:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The virtual environment: pinned requirements (torch from the local wheel
# cache when present), then the wick package itself in editable mode without
# running CMake (wheel.cmake=false): the binding loads build/libwick.so, which
# `make build` keeps current (lookup order: python/wick/runtime.py).
$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q -e . --no-deps --config-settings=wheel.cmake=false
	touch $@

setup: build $(VENV)/.installed

demo: setup
	$(VENV)/bin/wick demo

test: setup
	./scripts/test.sh

test-c: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Every op variant on every kernel set this host runs (reference, portable, each ISA level,
# threads) and on the built-in delegates (the test delegate, NNAPI on the test NNAPI library)
# against the reference kernels: one table (tests/unit/test_op_sweep.c, ~2 s; ctest runs it
# too). OP=CONV limits it to the ops whose name contains CONV.
op-sweep: build
	$(BUILD)/tests/unit/test_op_sweep $(OP)

test-python: setup
	$(PY) -m pytest tests/python

# The wheel as a user gets it: built by pip (scikit-build-core runs CMake), installed into a
# fresh virtual environment without torch, then a model loaded, run and inspected (~2 min).
test-wheel:
	bash tests/install/wheel_smoke.sh $(PYTHON)

# wick against its peers (LiteRT, ONNX Runtime, ExecuTorch, PyTorch eager) on the same models,
# then against LiteRT on the third-party files of the corpus cache (bench/peers/thirdparty.py);
# writes docs/performance.md (~20 min + ~25 s per cached third-party file; BENCH_ARGS=--quick for
# a short run). ExecuTorch lives in its own venv (.venv-executorch); if it cannot be installed its
# rows say why.
bench: setup
	bash bench/peers/setup_executorch.sh || echo "ExecuTorch peer unavailable: see build/executorch-setup.log"
	$(PY) -m bench.peers $(BENCH_ARGS)

# SmolLM2-135M-Instruct (real weights) on wick against llama.cpp, LiteRT and PyTorch eager: prefill
# 128 / 512 tokens and 128 decode steps at 1 and 2 threads, fp32 / int8 / int4 against F32 / Q8_0 /
# Q4_0, interleaved in one run (bench/llm_peers.py; ~20 min, more the first time: conversions).
# llama.cpp is built from source into its own venv (~/.cache/wick/llm/llamacpp, ~40 min once); if
# that fails its rows say why. BENCH_LLM_ARGS=--quick for 2 rounds.
bench-llm: setup
	bash bench/setup_llamacpp.sh || echo "llama.cpp peer unavailable: bench/setup_llamacpp.sh failed"
	$(PY) -m bench.llm_peers $(BENCH_LLM_ARGS)

# The whole real-model corpus (tests/corpus: mediapipe, Keras applications in four forms,
# MiniLM and SmolLM2 with real weights; built once into $$WICK_CORPUS_DIR: 6,947 s cold on 2 cores) checked
# against LiteRT; writes docs/conformance.md. `make test` checks a 25-file subset.
conformance: setup
	$(PY) -m tests.corpus --all --write

# The C tests and the Python tests again under AddressSanitizer + UBSan.
asan: $(VENV)/.installed
	WICK_SANITIZE=1 ./scripts/test.sh

# AArch64: cross-compile (Debian: gcc-aarch64-linux-gnu libc6-dev-arm64-cross, which
# apt will not keep beside gcc-multilib) and run the C tests, NEON kernels included,
# under qemu-aarch64 (Debian: qemu-user), then the NEON LLM kernels as whole operators
# (tests/python/runtime/test_aarch64_qemu.py, which `make test` skips when this build is stale).
test-aarch64:
	cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=Release -DWICK_WERROR=ON >/dev/null
	cmake --build build-aarch64 -j $(JOBS)
	ctest --test-dir build-aarch64 --output-on-failure -j $(JOBS)
	$(PY) -m pytest -q -p no:cacheprovider tests/python/runtime/test_aarch64_qemu.py

lint: $(VENV)/.installed
	$(PY) scripts/check_layers.py
	$(VENV)/bin/ruff check python tests bench
	$(VENV)/bin/ruff format --check python tests bench

format: $(VENV)/.installed
	$(VENV)/bin/ruff format python tests bench

# The C style (.clang-format; Debian 12's clang-format 14, as CI installs): every C file and
# header git tracks in src/ include/ tests/ tools/ bench/. format-check changes nothing and shows
# the first difference in each file that has one; format-c rewrites the files in place.
C_FORMAT_FILES = $(shell git ls-files 'src/*.[ch]' 'src/*.inc' 'include/*.h' 'tests/*.[ch]' \
  'tools/*.[ch]' 'bench/*.[ch]')
format-check:
	@clang-format --dry-run --Werror --ferror-limit=1 $(C_FORMAT_FILES) || \
	  { echo "C files differ from .clang-format (above): 'make format-c' rewrites them"; exit 1; }

format-c:
	clang-format -i $(C_FORMAT_FILES)

clean:
	rm -rf $(BUILD) build-asan build-aarch64
