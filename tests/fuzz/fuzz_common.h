/*
 * fuzz_common.h — the one-input check shared by the fuzz targets.
 *
 * wick_fuzz_run(bytes): load (copying nothing: the fuzzer's buffer is exactly
 * sized, so ASan sees any read past its end), create with a memory cap,
 * zero-fill the inputs, invoke, read every output. Any phase may fail, but
 * only with a known status and a non-empty message; anything else aborts so
 * the fuzzer records the input.
 *
 * WICK_FUZZ_MEMORY_CAP (bytes) overrides the 64 MiB cap, set for the load
 * (wick_model_options) and for the interpreter alike.
 * WICK_FUZZ_MAX_MACS (default 5e7) skips invoke for models whose operators
 * report more multiply-accumulates than that: a mutant may legitimately ask
 * for billions of MACs within the memory cap, and a slow-but-correct run is
 * not a finding (it would only trip libFuzzer's -timeout).
 * WICK_FUZZ_MAX_IO_BYTES (default 16 MiB) likewise skips invoke when the graph
 * inputs and outputs together hold more bytes: ops that report no MACs (a
 * 21M-element int8 SOFTMAX, a 25M-element LOGICAL_AND) take seconds under
 * ASan for the same legitimate reason.
 * Likewise a WHILE loop whose condition stays true runs until cancelled (as
 * in LiteRT): every invoke runs under a watchdog that cancels it after
 * WICK_FUZZ_INVOKE_MS (default 100) — the promise there is that cancel works
 * (tests/unit/untrusted_run.h, shared with test_malformed.c). 100 ms tests
 * that as well as a second does: with 1000 the corpus inputs that loop until
 * cancelled took ~60 % of a campaign's CPU (perf, fuzz_model corpus replay),
 * and their mutants mostly loop too.
 * When $WICK_NNAPI_LIBRARY names a library (run.sh builds the test NNAPI
 * implementation of tests/nnapi/ for it), every other input also runs with the
 * NNAPI delegate, so its operator mapping, its model building and that runtime
 * see the hostile files (wick_fuzz_nnapi).
 * The helpers are static inline, so a target that uses only some of them (as
 * fuzz_input_values.c does) compiles without unused-function warnings.
 */
#ifndef WICK_FUZZ_COMMON_H
#define WICK_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "untrusted_run.h" /* tests/unit/ */
#include "wick/wick.h"

static inline void wick_fuzz_die(const char *phase, wick_status st, const char *msg) {
  fprintf(stderr, "promise broken: %s returned %d (%s) with message \"%s\"\n", phase, (int)st,
          wick_status_string(st), msg ? msg : "(null)");
  abort();
}

static inline int wick_fuzz_known_error(wick_status st) {
  return st >= WICK_ERR_INVALID_ARGUMENT && st <= WICK_ERR_INVALID_INPUT;
}

/* wick_interpreter_invoke, cancelled after WICK_FUZZ_INVOKE_MS. */
static inline wick_status wick_fuzz_invoke(wick_interpreter *it) {
  static long ms = 0;
  if (ms == 0) {
    const char *env = getenv("WICK_FUZZ_INVOKE_MS");
    ms = env ? strtol(env, NULL, 10) : 100;
    if (ms <= 0) ms = 100;
  }
  return wick_invoke_watched(it, ms, NULL);
}

/* Reads every row of the delegation report (the operators inside subgraphs included) and the
 * bytes of each string, so the sanitizers see the report of hostile files too. */
static inline void wick_fuzz_read_report(const wick_interpreter *it) {
  size_t bytes = 0;
  for (size_t r = 0; r < wick_interpreter_delegation_row_count(it); r++) {
    wick_delegation_row row = {.struct_size = sizeof row};
    if (wick_interpreter_delegation_row(it, r, &row) != WICK_OK)
      wick_fuzz_die("report", WICK_ERR_INVALID_ARGUMENT, "row");
    if (row.parent >= (int64_t)r)
      wick_fuzz_die("report", WICK_ERR_INVALID_ARGUMENT, "a row before its parent");
    bytes += strlen(row.role) + strlen(row.op_name) + strlen(row.reason) + strlen(row.note);
    if (row.delegate != NULL) bytes += strlen(row.delegate);
  }
  (void)bytes;
}

/* The NNAPI delegate over $WICK_NNAPI_LIBRARY, made once; NULL when unset. */
static inline wick_delegate *wick_fuzz_nnapi(void) {
  static int made;
  static wick_delegate *delegate;
  if (!made) {
    made = 1;
    const char *lib = getenv("WICK_NNAPI_LIBRARY");
    if (lib != NULL && *lib && wick_delegate_create("nnapi", NULL, NULL, &delegate) != WICK_OK)
      abort();
  }
  return delegate;
}

/* Returns the phase reached: 0 load failed, 1 create failed, 2 invoke failed, 3 ran. */
static inline int wick_fuzz_run(const uint8_t *data, size_t size) {
  static size_t cap = 0;
  static uint64_t max_macs = 0, max_io = 0;
  if (cap == 0) {
    const char *env = getenv("WICK_FUZZ_MEMORY_CAP");
    cap = env ? (size_t)strtoull(env, NULL, 10) : (size_t)64 << 20;
    env = getenv("WICK_FUZZ_MAX_MACS");
    max_macs = env ? (uint64_t)strtoull(env, NULL, 10) : 50000000u;
    env = getenv("WICK_FUZZ_MAX_IO_BYTES");
    max_io = env ? (uint64_t)strtoull(env, NULL, 10) : (uint64_t)16 << 20;
  }
  wick_error_info err;
  err.message[0] = 0;
  wick_model *model = NULL;
  wick_model_options mo = wick_model_options_default();
  mo.memory_limit_bytes = cap;
  wick_status st = wick_model_load_buffer(data, size, &mo, &err, &model);
  if (st != WICK_OK) {
    if (!wick_fuzz_known_error(st) || err.message[0] == 0 || model != NULL)
      wick_fuzz_die("load", st, err.message);
    return 0;
  }
  wick_interpreter_options opt = wick_interpreter_options_default();
  opt.memory_limit_bytes = cap;
  static unsigned runs;
  wick_delegate *nnapi = wick_fuzz_nnapi();
  if (nnapi != NULL && (runs++ & 1)) {
    opt.delegates = &nnapi;
    opt.num_delegates = 1;
  }
  wick_interpreter *it = NULL;
  err.message[0] = 0;
  st = wick_interpreter_create(model, NULL, &opt, &err, &it);
  if (st != WICK_OK) {
    if (!wick_fuzz_known_error(st) || err.message[0] == 0 || it != NULL)
      wick_fuzz_die("create", st, err.message);
    wick_model_destroy(model);
    return 1;
  }
  int phase = 2;
  wick_fuzz_read_report(it);
  uint64_t macs = wick_total_macs(it);
  uint64_t io = 0;
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++)
    io += wick_tensor_byte_size(wick_interpreter_input(it, i));
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++)
    io += wick_tensor_byte_size(wick_interpreter_output(it, i));
  if (macs > max_macs || io > max_io) {
    wick_interpreter_destroy(it);
    wick_model_destroy(model);
    return phase;
  }
  wick_zero_inputs(it);
  st = wick_fuzz_invoke(it);
  if (st != WICK_OK) {
    if (!wick_fuzz_known_error(st) || wick_interpreter_last_error(it)[0] == 0)
      wick_fuzz_die("invoke", st, wick_interpreter_last_error(it));
  } else {
    phase = 3;
    wick_read_outputs(it);
  }
  wick_fuzz_read_report(it); /* (an invoke failure moves a partition to the CPU) */
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  return phase;
}

#endif /* WICK_FUZZ_COMMON_H */
