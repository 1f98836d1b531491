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
 * in LiteRT): every invoke runs under a watchdog thread that cancels it after
 * WICK_FUZZ_INVOKE_MS (default 1000) — the promise there is that cancel works.
 */
#ifndef WICK_FUZZ_COMMON_H
#define WICK_FUZZ_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wick/wick.h"

static void wick_fuzz_die(const char *phase, wick_status st, const char *msg) {
  fprintf(stderr, "promise broken: %s returned %d (%s) with message \"%s\"\n", phase, (int)st,
          wick_status_string(st), msg ? msg : "(null)");
  abort();
}

static int wick_fuzz_known_error(wick_status st) {
  return st >= WICK_ERR_INVALID_ARGUMENT && st <= WICK_ERR_INVALID_INPUT;
}

typedef struct wick_fuzz_watchdog {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  long ms;
  wick_interpreter *it;
} wick_fuzz_watchdog;

static void *wick_fuzz_watchdog_main(void *arg) {
  wick_fuzz_watchdog *w = arg;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += w->ms / 1000;
  deadline.tv_nsec += (w->ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&w->mu);
  int rc = 0;
  while (!w->done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&w->cv, &w->mu, &deadline);
  if (!w->done) wick_interpreter_cancel(w->it);
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* wick_interpreter_invoke, cancelled after WICK_FUZZ_INVOKE_MS. */
static wick_status wick_fuzz_invoke(wick_interpreter *it) {
  static long ms = 0;
  if (ms == 0) {
    const char *env = getenv("WICK_FUZZ_INVOKE_MS");
    ms = env ? strtol(env, NULL, 10) : 1000;
    if (ms <= 0) ms = 1000;
  }
  wick_fuzz_watchdog w;
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  w.done = false;
  w.ms = ms;
  w.it = it;
  pthread_t thread;
  bool armed = pthread_create(&thread, NULL, wick_fuzz_watchdog_main, &w) == 0;
  wick_status st = wick_interpreter_invoke(it);
  if (armed) {
    pthread_mutex_lock(&w.mu);
    w.done = true;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(thread, NULL);
  }
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  return st;
}

/* Returns the phase reached: 0 load failed, 1 create failed, 2 invoke failed, 3 ran. */
static int wick_fuzz_run(const uint8_t *data, size_t size) {
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
  uint64_t macs = 0;
  for (size_t i = 0; i < wick_interpreter_op_count(it); i++) {
    uint64_t m = wick_interpreter_op_macs(it, i);
    macs = macs + m < macs ? UINT64_MAX : macs + m;
  }
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
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    size_t n = wick_tensor_byte_size(t);
    void *zeros = calloc(1, n ? n : 1);
    if (zeros == NULL) abort();
    (void)wick_tensor_copy_from(t, zeros, n);
    free(zeros);
  }
  st = wick_fuzz_invoke(it);
  if (st != WICK_OK) {
    if (!wick_fuzz_known_error(st) || wick_interpreter_last_error(it)[0] == 0)
      wick_fuzz_die("invoke", st, wick_interpreter_last_error(it));
  } else {
    phase = 3;
    for (size_t i = 0; i < wick_interpreter_output_count(it); i++) {
      const wick_tensor *t = wick_interpreter_output(it, i);
      size_t n = wick_tensor_byte_size(t);
      void *buf = malloc(n ? n : 1);
      if (buf == NULL) abort();
      (void)wick_tensor_copy_to(t, buf, n);
      free(buf);
    }
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  return phase;
}

#endif /* WICK_FUZZ_COMMON_H */
