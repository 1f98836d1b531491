/*
 * fuzz_model.c — libFuzzer target: raw bytes -> load -> create -> invoke.
 *
 * The untrusted-file promise (SECURITY.md) for arbitrary bytes: every
 * phase either succeeds or fails with a status and a message; inputs are
 * zero-filled; the interpreter runs under a memory cap so a file cannot make
 * the fuzzer run out of memory legitimately. A failure without a message is
 * reported as a crash (abort), like any sanitizer finding.
 *
 * Build and run: tests/fuzz/run.sh. Replay a file without libFuzzer: build
 * with -DWICK_FUZZ_REPLAY_MAIN (tests/fuzz/replay_main.h) and pass the files.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wick_fuzz_run(data, size);
  return 0;
}

#ifdef WICK_FUZZ_REPLAY_MAIN
#include "replay_main.h"
#endif
