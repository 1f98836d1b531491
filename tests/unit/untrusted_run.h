/*
 * untrusted_run.h — running a model from an untrusted file, as
 * test_malformed.c and the fuzz targets (tests/fuzz/fuzz_common.h) both do:
 * the total work it asks for, zero-filled inputs, an invoke under a cancel
 * watchdog, and every output read back in full (so ASan sees its bounds).
 *
 * An untrusted file may legitimately loop forever (a WHILE whose condition
 * stays true, as in LiteRT): that is not a crash, and the promise there is
 * that invoke can be cancelled. wick_invoke_watched() runs the invoke while a
 * second thread waits up to `ms` milliseconds for it to finish and calls
 * wick_interpreter_cancel() if it has not.
 */
#ifndef WICK_TEST_UNTRUSTED_RUN_H
#define WICK_TEST_UNTRUSTED_RUN_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "wick/wick.h"

typedef struct wick_invoke_watchdog {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;      /* the invoke returned (set by the invoking thread) */
  bool cancelled; /* the watchdog cancelled the invoke */
  long ms;
  wick_interpreter *it;
} wick_invoke_watchdog;

static inline void *wick_invoke_watchdog_main(void *arg) {
  wick_invoke_watchdog *w = arg;
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
  if (!w->done) {
    wick_interpreter_cancel(w->it);
    w->cancelled = true;
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* wick_interpreter_invoke(it), cancelled after `ms` milliseconds. Sets
 * *cancelled (when not NULL) to whether the watchdog had to cancel it. If the
 * watchdog thread cannot be started the invoke runs unwatched. */
static inline wick_status wick_invoke_watched(wick_interpreter *it, long ms, bool *cancelled) {
  wick_invoke_watchdog w;
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  w.done = false;
  w.cancelled = false;
  w.ms = ms;
  w.it = it;
  pthread_t thread;
  bool armed = pthread_create(&thread, NULL, wick_invoke_watchdog_main, &w) == 0;
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
  if (cancelled) *cancelled = w.cancelled;
  return st;
}

/* The multiply-accumulates of all operators, saturating: a mutant may ask for
 * absurd sizes. */
static inline uint64_t wick_total_macs(const wick_interpreter *it) {
  uint64_t macs = 0;
  for (size_t i = 0; i < wick_interpreter_op_count(it); i++) {
    uint64_t m = wick_interpreter_op_macs(it, i);
    macs = macs + m < macs ? UINT64_MAX : macs + m;
  }
  return macs;
}

/* Writes zeros to every graph input (an input may refuse, e.g. a constant
 * one: fine). */
static inline void wick_zero_inputs(wick_interpreter *it) {
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    size_t n = wick_tensor_byte_size(t);
    void *zeros = calloc(1, n ? n : 1);
    if (zeros == NULL) abort();
    (void)wick_tensor_copy_from(t, zeros, n);
    free(zeros);
  }
}

/* Reads every output completely: a bogus pointer or size shows up here. */
static inline void wick_read_outputs(const wick_interpreter *it) {
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    size_t n = wick_tensor_byte_size(t);
    void *buf = malloc(n ? n : 1);
    if (buf == NULL) abort();
    (void)wick_tensor_copy_to(t, buf, n);
    free(buf);
  }
}

#endif /* WICK_TEST_UNTRUSTED_RUN_H */
