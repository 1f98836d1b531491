/*
 * bench_threads.c — the thread pool's own costs (src/core/thread_pool.c):
 *
 *   dispatch   one wick_thread_pool_run of `threads` tasks that each busy-wait
 *              10 us, back to back (workers spinning): 10 us plus the fixed
 *              cost of a parallel operator when the workers join at once,
 *              up to threads x 10 us when they do not;
 *   after idle the same after the workers fell asleep (a 2 ms pause first):
 *              adds the cost of waking them through the condition variable;
 *   split      a compute loop (200 k multiply-adds per task, 64 tasks) at 1
 *              and N threads: the speedup the pool delivers when the machine
 *              gives it the cores.
 *
 * Reports min and median of many repetitions; on a shared machine quote the
 * min and the load average. Built by CMake, never run by ctest.
 *
 *     build/bench_threads [threads]     (default 2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/internal.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void wait_task(void *arg, size_t task, size_t thread) {
  (void)arg;
  (void)task;
  (void)thread;
  double end = now_us() + 10.0;
  while (now_us() < end) {
  }
}

typedef struct work {
  float out[64];
} work;

static void compute_task(void *arg, size_t task, size_t thread) {
  (void)thread;
  work *w = arg;
  float a = 1.0f + (float)task * 1e-6f, acc = 0.0f;
  for (int i = 0; i < 200000; i++) acc = acc * 0.999999f + a;
  w->out[task] = acc;
}

static void report(const char *what, double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("%-34s min %9.2f us   median %9.2f us\n", what, t[0], t[n / 2]);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  wick_mem mem;
  wick_mem_init(&mem, NULL, 0);
  wick_thread_pool *pool;
  if (wick_thread_pool_create(&mem, threads, &pool) != WICK_OK) return 1;
  printf("threads %zu (load average: see /proc/loadavg)\n", wick_thread_pool_threads(pool));
  enum { REPS = 2000, IDLE_REPS = 100, COMPUTE_REPS = 15 };
  double *t = malloc(REPS * sizeof *t);
  size_t n_tasks = wick_thread_pool_threads(pool);
  for (int r = 0; r < REPS; r++) {
    double t0 = now_us();
    wick_thread_pool_run(pool, n_tasks < 2 ? 2 : n_tasks, UINT64_MAX, wait_task, NULL, NULL);
    t[r] = now_us() - t0;
  }
  report("10 us tasks x threads, spinning", t, REPS);
  for (int r = 0; r < IDLE_REPS; r++) {
    struct timespec pause = {0, 2 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double t0 = now_us();
    wick_thread_pool_run(pool, n_tasks < 2 ? 2 : n_tasks, UINT64_MAX, wait_task, NULL, NULL);
    t[r] = now_us() - t0;
  }
  report("10 us tasks x threads, after 2 ms", t, IDLE_REPS);
  work w;
  double one[COMPUTE_REPS];
  for (int r = 0; r < COMPUTE_REPS; r++) {
    double t0 = now_us();
    wick_thread_pool_run(NULL, 64, UINT64_MAX, compute_task, &w, NULL);
    one[r] = now_us() - t0;
  }
  report("64 x 200k mul-adds, 1 thread", one, COMPUTE_REPS);
  for (int r = 0; r < COMPUTE_REPS; r++) {
    double t0 = now_us();
    wick_thread_pool_run(pool, 64, UINT64_MAX, compute_task, &w, NULL);
    t[r] = now_us() - t0;
  }
  report("64 x 200k mul-adds, pool", t, COMPUTE_REPS);
  printf("speedup (min / min)                %.2fx\n", one[0] / t[0]);
  wick_thread_pool_destroy(pool);
  free(t);
  return 0;
}
