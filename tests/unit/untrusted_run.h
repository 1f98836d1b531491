/*
 * untrusted_run.h — running a model from an untrusted file, as
 * test_malformed.c and the fuzz targets (tests/fuzz/fuzz_common.h) both do:
 * the total work it asks for, zero-filled inputs, an invoke under a cancel
 * watchdog, and every output read back in full (so ASan sees its bounds).
 *
 * An untrusted file may legitimately loop forever (a WHILE whose condition
 * stays true, as in LiteRT): that is not a crash, and the promise there is
 * that invoke can be cancelled. wick_invoke_watched() arms a watchdog for `ms`
 * milliseconds around the invoke, and the watchdog calls
 * wick_interpreter_cancel() if the invoke is still running at the deadline.
 *
 * The watchdog is one thread per process (per translation unit that includes
 * this header), started on first use and never stopped: it wakes every
 * WICK_WATCHDOG_TICK_MS and cancels the armed invoke once its deadline has
 * passed. Arming and disarming only take an uncontended mutex — a thread
 * created and joined per invoke cost more than a whole small-model execution
 * in the ASan fuzz builds. One invoke is watched at a time: callers run
 * their invokes from one thread.
 */
#ifndef WICK_TEST_UNTRUSTED_RUN_H
#define WICK_TEST_UNTRUSTED_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "wick/wick.h"

/* How often the watchdog looks at the clock: the cancel comes at most this
 * late. */
#define WICK_WATCHDOG_TICK_MS 5

typedef struct wick_invoke_watchdog {
  pthread_mutex_t mu;
  pthread_once_t once;
  bool running;         /* the thread started (else invokes run unwatched) */
  wick_interpreter *it; /* the watched invoke's interpreter, NULL when none runs */
  uint64_t deadline_ns; /* CLOCK_MONOTONIC */
  bool cancelled;       /* the watchdog cancelled the watched invoke */
} wick_invoke_watchdog;

static inline wick_invoke_watchdog *wick_invoke_watchdog_get(void) {
  static wick_invoke_watchdog w = {
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_ONCE_INIT, false, NULL, 0, false};
  return &w;
}

static inline uint64_t wick_watchdog_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void *wick_invoke_watchdog_main(void *arg) {
  wick_invoke_watchdog *w = arg;
  const struct timespec tick = {0, WICK_WATCHDOG_TICK_MS * 1000000L};
  for (;;) {
    nanosleep(&tick, NULL);
    pthread_mutex_lock(&w->mu);
    if (w->it != NULL && !w->cancelled && wick_watchdog_now_ns() >= w->deadline_ns) {
      wick_interpreter_cancel(w->it);
      w->cancelled = true;
    }
    pthread_mutex_unlock(&w->mu);
  }
  return NULL;
}

static inline void wick_invoke_watchdog_start(void) {
  wick_invoke_watchdog *w = wick_invoke_watchdog_get();
  pthread_t thread;
  if (pthread_create(&thread, NULL, wick_invoke_watchdog_main, w) == 0) {
    pthread_detach(thread);
    w->running = true;
  }
}

/* wick_interpreter_invoke(it), cancelled after `ms` milliseconds. Sets
 * *cancelled (when not NULL) to whether the watchdog had to cancel it. If the
 * watchdog thread cannot be started the invoke runs unwatched. */
static inline wick_status wick_invoke_watched(wick_interpreter *it, long ms, bool *cancelled) {
  wick_invoke_watchdog *w = wick_invoke_watchdog_get();
  pthread_once(&w->once, wick_invoke_watchdog_start);
  pthread_mutex_lock(&w->mu);
  w->it = w->running ? it : NULL;
  w->deadline_ns = wick_watchdog_now_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000u;
  w->cancelled = false;
  pthread_mutex_unlock(&w->mu);
  wick_status st = wick_interpreter_invoke(it);
  pthread_mutex_lock(&w->mu);
  w->it = NULL;
  bool was_cancelled = w->cancelled;
  pthread_mutex_unlock(&w->mu);
  if (cancelled) *cancelled = was_cancelled;
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
