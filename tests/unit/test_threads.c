/*
 * test_threads.c — one model, many threads: each thread creates its own
 * interpreter over the same wick_model and runs it repeatedly; every result
 * must equal the single-threaded one bit for bit. A second phase cancels
 * interpreters from another thread while they run. Built normally it checks
 * the results; built with -DWICK_SANITIZE=thread (CI) ThreadSanitizer checks
 * that sharing a model needs no locks (RELIABILITY.md rule 6).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiny_model.h"
#include "wick/wick.h"

enum { THREADS = 4, RUNS = 50 };

typedef struct job {
  const wick_model *model;
  const float *input;
  size_t input_bytes;
  const float *want; /* outputs of the single-threaded run, concatenated */
  size_t want_bytes;
  int failures;
} job;

static size_t outputs_bytes(wick_interpreter *it) {
  size_t n = 0;
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++)
    n += wick_tensor_byte_size(wick_interpreter_output(it, i));
  return n;
}

static void copy_outputs(wick_interpreter *it, unsigned char *dst) {
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    memcpy(dst, wick_tensor_data(t), wick_tensor_byte_size(t));
    dst += wick_tensor_byte_size(t);
  }
}

static void *worker(void *arg) {
  job *j = arg;
  wick_error_info err;
  wick_interpreter *it;
  if (wick_interpreter_create(j->model, NULL, NULL, &err, &it) != WICK_OK) {
    fprintf(stderr, "create: %s\n", err.message);
    j->failures++;
    return NULL;
  }
  unsigned char *got = malloc(j->want_bytes);
  for (int r = 0; r < RUNS; r++) {
    wick_tensor_copy_from(wick_interpreter_input(it, 0), j->input, j->input_bytes);
    if (wick_interpreter_invoke(it) != WICK_OK) {
      j->failures++;
      break;
    }
    copy_outputs(it, got);
    if (memcmp(got, j->want, j->want_bytes) != 0) j->failures++;
  }
  free(got);
  wick_interpreter_destroy(it);
  return NULL;
}

typedef struct cancel_job {
  wick_interpreter *it;
  atomic_int stop;
  atomic_int cancelled, ok, other;
} cancel_job;

static void *invoker(void *arg) {
  cancel_job *c = arg;
  while (!atomic_load(&c->stop)) {
    wick_status st = wick_interpreter_invoke(c->it);
    if (st == WICK_OK)
      atomic_fetch_add(&c->ok, 1);
    else if (st == WICK_ERR_CANCELLED)
      atomic_fetch_add(&c->cancelled, 1);
    else
      atomic_fetch_add(&c->other, 1);
  }
  return NULL;
}

int main(void) {
  size_t size;
  uint8_t *bytes = tm_demo_chain(&size);
  wick_error_info err;
  wick_model *model;
  if (wick_model_load_buffer(bytes, size, NULL, &err, &model) != WICK_OK) {
    fprintf(stderr, "load: %s\n", err.message);
    return 1;
  }
  wick_interpreter *ref;
  if (wick_interpreter_create(model, NULL, NULL, &err, &ref) != WICK_OK) {
    fprintf(stderr, "create: %s\n", err.message);
    return 1;
  }
  wick_tensor *in = wick_interpreter_input(ref, 0);
  size_t in_bytes = wick_tensor_byte_size(in);
  float *input = malloc(in_bytes);
  for (size_t i = 0; i < in_bytes / sizeof(float); i++) input[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  wick_tensor_copy_from(in, input, in_bytes);
  if (wick_interpreter_invoke(ref) != WICK_OK) return 1;
  size_t want_bytes = outputs_bytes(ref);
  unsigned char *want = malloc(want_bytes);
  copy_outputs(ref, want);

  pthread_t th[THREADS];
  job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (job){model, input, in_bytes, (const float *)want, want_bytes, 0};
    pthread_create(&th[i], NULL, worker, &jobs[i]);
  }
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    failures += jobs[i].failures;
  }

  /* Cancel from another thread while invokes run: each returns OK or
   * CANCELLED, never anything else, and the interpreter stays usable. */
  cancel_job c = {ref, 0, 0, 0, 0};
  pthread_t inv;
  pthread_create(&inv, NULL, invoker, &c);
  /* Keep cancelling until both outcomes were seen a few times. */
  for (long i = 0; i < 100000000L && (atomic_load(&c.cancelled) < 20 || atomic_load(&c.ok) < 20);
       i++) {
    if (i % 8 == 0) wick_interpreter_cancel(ref);
    if (i % 1024 == 0) sched_yield();
  }
  atomic_store(&c.stop, 1);
  pthread_join(inv, NULL);
  if (atomic_load(&c.other) != 0 || atomic_load(&c.cancelled) == 0) failures++;
  wick_tensor_copy_from(wick_interpreter_input(ref, 0), input, in_bytes);
  while (wick_interpreter_invoke(ref) == WICK_ERR_CANCELLED) {
  }
  unsigned char *again = malloc(want_bytes);
  copy_outputs(ref, again);
  if (memcmp(again, want, want_bytes) != 0) failures++;

  printf("%d threads x %d runs on one model, %d invokes ok / %d cancelled: %d failures\n",
         THREADS, RUNS, atomic_load(&c.ok), atomic_load(&c.cancelled), failures);
  free(again);
  free(want);
  free(input);
  free(bytes);
  wick_interpreter_destroy(ref);
  wick_model_destroy(model);
  return failures ? 1 : 0;
}
