/*
 * thread_pool.c — the interpreter's persistent worker threads and the
 * parallel-for that operators use (wick_parallel_for, internal.h).
 *
 * One pool per interpreter, created with options.num_threads - 1 workers; the
 * thread that calls invoke is thread 0 and works too. A job is n independent
 * tasks; threads claim them one at a time from a shared counter until none
 * are left, so a worker that the OS deschedules costs at most the task it
 * holds, and the caller never waits for an idle worker to wake up.
 *
 * The claim word packs (job generation << 32 | front << 16 | back): tasks
 * [front, back) of job g are still open. The caller claims from the front,
 * workers from the back, each with one compare-and-swap, so a late worker
 * still holding an old generation can never claim a task of a newer job.
 * With two threads each keeps about the same part of the output from one
 * operator to the next (the caller the top rows, the worker the bottom), so
 * the activations it reads are mostly the ones it wrote, still in its own
 * core's cache; yet a preempted thread's share goes to the other one task by
 * task. When the caller runs out of tasks (or sees the cancel flag) it closes
 * the job by swapping in (g, CLOSED): the swapped-out front and back tell how
 * many tasks were claimed, and it waits until that many have finished.
 *
 * Waiting is bounded spinning, then sleeping. A worker spins (with the CPU's
 * pause hint) for the next job — consecutive operators follow each other
 * within microseconds — but at most SPIN_WAIT_NS per wait and, in all, half
 * the time it spent in tasks; then it sleeps on a condition variable, and
 * the caller signals it only when a worker is asleep (a seq_cst store/load
 * pair on `claim` and `sleepers` makes the hand-off race-free). The caller,
 * out of tasks, spins for about two task times for the workers' last tasks,
 * then sleeps too (wait_for_claimed). On a machine busier than its cores a
 * spinning thread takes CPU time from the ones doing the work — threads of
 * one process usually share one scheduler group — and is preempted at
 * random points, maybe inside its next task: with unbounded spinning,
 * 2 threads ran 1.3-1.5x slower than 1 on a loaded 2-core VM; bounded,
 * about as fast as 1, and as fast as before on a quiet machine. A job of
 * less than WICK_WAKE_MIN_WORK (op_api.h) does not wake sleeping workers:
 * the workers that are awake take their share, or the caller runs it inline
 * when all sleep — a small op would wait longer for a woken worker than it
 * saves.
 *
 * Results do not depend on the number of threads as long as each task
 * computes its outputs with the same instructions wherever it runs: ops split
 * work into tasks by shape only, never by thread count, and no task adds into
 * another's outputs (see docs/architecture.md, "Threads").
 *
 * Memory: the pool and its thread handles come from the interpreter's
 * wick_mem, and each worker's stack (STACK_BYTES, allocated by pthreads with
 * its guard page) is charged to the interpreter's memory cap.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "kernels/split.h"

/* A worker waiting for the next job spins for at most SPIN_WAIT_NS, and in
 * all for at most half the time it spent running tasks (its credit, capped
 * at SPIN_CREDIT_MAX_NS), then sleeps until the caller wakes it. */
#define SPIN_WAIT_NS 25000u
#define SPIN_CREDIT_MAX_NS 200000u
#define STACK_BYTES ((size_t)512 * 1024) /* per worker; tasks run leaf kernels */
/* The claim word's low half: (front << 16 | back), the open tasks [front, back). */
#define MAX_JOB_TASKS 0xffffu
#define CLOSED 0xffff0000u /* front 0xffff, back 0: nothing to claim */
/* The caller waits for a worker's last task by spinning two of its own task
 * times, within these bounds, before it sleeps. */
#define CALLER_SPIN_MIN_NS 5000u
#define CALLER_SPIN_MAX_NS 100000u

typedef struct worker_start {
  wick_thread_pool *pool;
  size_t index; /* 1 .. num_threads - 1 */
} worker_start;

struct wick_thread_pool {
  wick_mem *mem;
  size_t num_threads; /* including the caller */
  pthread_t *threads;
  worker_start *starts;
  size_t started;      /* workers running */
  uint32_t generation; /* of the last job; written by the caller only */

  /* The current job. Written by the caller before it publishes `claim`. */
  _Atomic(wick_task_fn) job_fn;
  _Atomic(void *) job_arg;
  _Atomic(const atomic_int *) job_cancel;

  /* Their own cache lines: every thread hits `claim` per task and `done`
   * per finished task, while idle workers poll `claim`. */
  _Alignas(64) _Atomic uint64_t claim; /* generation << 32 | next task index */
  _Alignas(64) atomic_size_t done;     /* tasks of the current job finished */
  _Alignas(64) atomic_int stop;

  /* Profiling counters (wick_pool_stats): busy_ns[t] is written by thread t
   * only, before it counts its task done; the rest by the caller. */
  atomic_bool profiling;
  uint64_t jobs, tasks, parallel_ns;
  struct {
    _Alignas(64) uint64_t ns;
  } busy[WICK_MAX_THREADS];

  pthread_mutex_t lock;    /* for sleeping only */
  pthread_cond_t wake;     /* workers wait here for a job */
  pthread_cond_t finished; /* the caller waits here for the job's last tasks */
  atomic_int sleepers;
  atomic_int caller_asleep;
};

/* True while this OS thread runs a task: a task that calls wick_parallel_for
 * again runs the inner loop inline. */
static _Thread_local bool in_task;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline bool is_cancelled(const atomic_int *cancel) {
  return cancel != NULL && atomic_load_explicit(cancel, memory_order_relaxed) != 0;
}

/* Claims and runs tasks of job `gen` until none are left, the job is closed,
 * or the cancel flag is set. */
static size_t run_tasks(wick_thread_pool *pool, uint32_t gen, size_t thread) {
  for (size_t ran = 0;; ran++) {
    uint64_t c = atomic_load_explicit(&pool->claim, memory_order_acquire);
    uint32_t task;
    for (;;) {
      if ((uint32_t)(c >> 32) != gen) return ran;
      const uint32_t front = (uint32_t)(c >> 16) & 0xffffu, back = (uint32_t)c & 0xffffu;
      if (front >= back) return ran;
      if (is_cancelled(atomic_load_explicit(&pool->job_cancel, memory_order_relaxed))) return ran;
      /* The caller takes tasks from the front, workers from the back. */
      task = thread == 0 ? front : back - 1;
      const uint64_t next = thread == 0 ? c + ((uint64_t)1 << 16) : c - 1;
      if (atomic_compare_exchange_weak_explicit(&pool->claim, &c, next, memory_order_acq_rel,
                                                memory_order_acquire))
        break;
    }
    /* The claim succeeded, so the job is still open: its fields are stable. */
    wick_task_fn fn = atomic_load_explicit(&pool->job_fn, memory_order_relaxed);
    void *arg = atomic_load_explicit(&pool->job_arg, memory_order_relaxed);
    if (atomic_load_explicit(&pool->profiling, memory_order_relaxed)) {
      uint64_t t0 = monotonic_ns();
      fn(arg, task, thread);
      pool->busy[thread].ns += monotonic_ns() - t0;
    } else {
      fn(arg, task, thread);
    }
    /* seq_cst, paired with the caller's store to caller_asleep before it
     * reads `done` (finish_job): one of the two sees the other. */
    atomic_fetch_add(&pool->done, 1);
    if (thread != 0 && atomic_load(&pool->caller_asleep)) {
      pthread_mutex_lock(&pool->lock);
      pthread_cond_signal(&pool->finished);
      pthread_mutex_unlock(&pool->lock);
    }
  }
}

/* The caller, out of tasks, waits until the `claimed` tasks of the closed job
 * have finished. A worker still holding one either runs it right now, and
 * will finish within about one task's time (the caller's own tasks took
 * `mine_ns` for `mine` of them), or was descheduled by the OS on a busy
 * machine. So the caller spins for a few task times, then sleeps: that frees
 * its CPU, and the kernel's idle balancing can move the descheduled worker
 * onto it (spinning or sched_yield would keep the CPU busy, and the worker
 * waits for its own CPU to come free). */
static void wait_for_claimed(wick_thread_pool *pool, size_t claimed, size_t mine,
                             uint64_t mine_ns) {
  if (atomic_load_explicit(&pool->done, memory_order_acquire) >= claimed) return;
  uint64_t spin_ns = mine > 0 ? 2 * (mine_ns / mine) : CALLER_SPIN_MAX_NS;
  if (spin_ns < CALLER_SPIN_MIN_NS) spin_ns = CALLER_SPIN_MIN_NS;
  if (spin_ns > CALLER_SPIN_MAX_NS) spin_ns = CALLER_SPIN_MAX_NS;
  const uint64_t start = monotonic_ns();
  for (unsigned spins = 1; atomic_load_explicit(&pool->done, memory_order_acquire) < claimed;
       spins++) {
    cpu_relax();
    if ((spins & 63u) == 0 && monotonic_ns() - start > spin_ns) break;
  }
  pthread_mutex_lock(&pool->lock);
  atomic_store(&pool->caller_asleep, 1);
  while (atomic_load(&pool->done) < claimed) pthread_cond_wait(&pool->finished, &pool->lock);
  atomic_store(&pool->caller_asleep, 0);
  pthread_mutex_unlock(&pool->lock);
}

/* Waits until a job newer than `seen` is published or the pool stops;
 * returns its generation. Spins (with the CPU's pause hint) for at most
 * SPIN_WAIT_NS and at most *credit_ns, taking what it spent out of the
 * credit, then sleeps on the condition variable. */
static uint32_t wait_for_job(wick_thread_pool *pool, uint32_t seen, uint64_t *credit_ns) {
  const uint64_t start = monotonic_ns();
  const uint64_t budget = *credit_ns < SPIN_WAIT_NS ? *credit_ns : SPIN_WAIT_NS;
  for (unsigned spins = 1;; spins++) {
    uint32_t gen = (uint32_t)(atomic_load_explicit(&pool->claim, memory_order_acquire) >> 32);
    if (gen != seen || atomic_load_explicit(&pool->stop, memory_order_relaxed)) {
      uint64_t spent = monotonic_ns() - start;
      *credit_ns = spent < *credit_ns ? *credit_ns - spent : 0;
      return gen;
    }
    cpu_relax();
    if ((spins & 63u) == 0 && monotonic_ns() - start >= budget) break;
  }
  *credit_ns = *credit_ns > budget ? *credit_ns - budget : 0;
  pthread_mutex_lock(&pool->lock);
  atomic_fetch_add(&pool->sleepers, 1);
  uint32_t gen;
  while ((gen = (uint32_t)(atomic_load(&pool->claim) >> 32)) == seen && !atomic_load(&pool->stop))
    pthread_cond_wait(&pool->wake, &pool->lock);
  atomic_fetch_sub(&pool->sleepers, 1);
  pthread_mutex_unlock(&pool->lock);
  return gen;
}

static void *worker_main(void *p) {
  worker_start *start = p;
  wick_thread_pool *pool = start->pool;
  size_t index = start->index;
  uint32_t seen = 0;
  uint64_t credit_ns = SPIN_CREDIT_MAX_NS;
  for (;;) {
    seen = wait_for_job(pool, seen, &credit_ns);
    if (atomic_load(&pool->stop)) break;
    const uint64_t t0 = monotonic_ns();
    in_task = true;
    run_tasks(pool, seen, index);
    in_task = false;
    credit_ns += (monotonic_ns() - t0) / 2;
    if (credit_ns > SPIN_CREDIT_MAX_NS) credit_ns = SPIN_CREDIT_MAX_NS;
  }
  return NULL;
}

wick_status wick_thread_pool_create(wick_mem *mem, int num_threads, wick_thread_pool **pool_out) {
  *pool_out = NULL;
  if (num_threads < 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    num_threads = online > 0 ? (int)(online < WICK_MAX_THREADS ? online : WICK_MAX_THREADS) : 1;
  }
  if (num_threads <= 1) return WICK_OK; /* no pool: everything runs on the caller */
  if (num_threads > WICK_MAX_THREADS) num_threads = WICK_MAX_THREADS;
  size_t workers = (size_t)num_threads - 1;
  wick_thread_pool *pool = wick_mem_calloc(mem, 1, sizeof *pool);
  if (pool == NULL) return WICK_ERR_OUT_OF_MEMORY;
  pool->mem = mem;
  pool->threads = wick_mem_calloc(mem, workers, sizeof(pthread_t));
  worker_start *starts = pool->starts = wick_mem_calloc(mem, workers, sizeof *starts);
  size_t stack_total;
  if (pool->threads == NULL || starts == NULL ||
      !wick_mul_size(workers, STACK_BYTES, &stack_total) || !wick_mem_charge(mem, stack_total)) {
    wick_mem_free(mem, starts);
    wick_mem_free(mem, pool->threads);
    wick_mem_free(mem, pool);
    return WICK_ERR_OUT_OF_MEMORY;
  }
  atomic_init(&pool->job_fn, NULL);
  atomic_init(&pool->job_arg, NULL);
  atomic_init(&pool->job_cancel, NULL);
  atomic_init(&pool->claim, 0);
  atomic_init(&pool->done, 0);
  atomic_init(&pool->stop, 0);
  atomic_init(&pool->sleepers, 0);
  atomic_init(&pool->profiling, false);
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->finished, NULL);
  atomic_init(&pool->caller_asleep, 0);

  /* Workers block every signal: the application's handlers run on its own
   * threads. They inherit the mask of the thread that creates them. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  bool attr_ok = pthread_attr_init(&attr) == 0;
  if (attr_ok) pthread_attr_setstacksize(&attr, STACK_BYTES);
  for (size_t i = 0; i < workers; i++) {
    starts[i].pool = pool;
    starts[i].index = i + 1;
    if (pthread_create(&pool->threads[i], attr_ok ? &attr : NULL, worker_main, &starts[i]) != 0)
      break; /* run with the workers we have */
    pool->started++;
  }
  if (attr_ok) pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  wick_mem_discharge(mem, (workers - pool->started) * STACK_BYTES);
  pool->num_threads = pool->started + 1;
  *pool_out = pool;
  return WICK_OK;
}

void wick_thread_pool_destroy(wick_thread_pool *pool) {
  if (pool == NULL) return;
  pthread_mutex_lock(&pool->lock);
  atomic_store(&pool->stop, 1);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (size_t i = 0; i < pool->started; i++) pthread_join(pool->threads[i], NULL);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->finished);
  pthread_mutex_destroy(&pool->lock);
  wick_mem *mem = pool->mem;
  wick_mem_discharge(mem, pool->started * STACK_BYTES);
  wick_mem_free(mem, pool->starts);
  wick_mem_free(mem, pool->threads);
  wick_mem_free(mem, pool);
}

size_t wick_thread_pool_threads(const wick_thread_pool *pool) {
  return pool ? pool->num_threads : 1;
}

/* A job of more than MAX_JOB_TASKS tasks runs as groups of consecutive
 * tasks (each still runs on its own, in order). */
typedef struct grouped_job {
  wick_task_fn fn;
  void *arg;
  size_t n_tasks, per_group;
} grouped_job;

static void run_group(void *p, size_t group, size_t thread) {
  const grouped_job *j = p;
  const size_t begin = group * j->per_group;
  const size_t end = j->n_tasks - begin < j->per_group ? j->n_tasks : begin + j->per_group;
  for (size_t t = begin; t < end; t++) j->fn(j->arg, t, thread);
}

bool wick_thread_pool_run(wick_thread_pool *pool, size_t n_tasks, uint64_t work, wick_task_fn fn,
                          void *arg, const atomic_int *cancel) {
  if (work == 0 && __builtin_mul_overflow((uint64_t)n_tasks, WICK_TASK_GRAIN, &work))
    work = UINT64_MAX;
  const bool small = work < WICK_WAKE_MIN_WORK;
  if (pool == NULL || pool->num_threads <= 1 || n_tasks <= 1 || in_task ||
      (small && (size_t)atomic_load(&pool->sleepers) >= pool->num_threads - 1)) {
    /* Inline, in task order; the cancel flag is still checked between tasks. */
    for (size_t t = 0; t < n_tasks; t++) {
      if (is_cancelled(cancel)) return false;
      fn(arg, t, 0);
    }
    return true;
  }
  if (n_tasks > MAX_JOB_TASKS) {
    grouped_job g = {fn, arg, n_tasks, (n_tasks + MAX_JOB_TASKS - 1) / MAX_JOB_TASKS};
    return wick_thread_pool_run(pool, (n_tasks + g.per_group - 1) / g.per_group, work, run_group,
                                &g, cancel);
  }
  const bool profiling = atomic_load_explicit(&pool->profiling, memory_order_relaxed);
  const uint64_t t0 = monotonic_ns();
  uint32_t gen = ++pool->generation;
  if (gen == 0) gen = ++pool->generation; /* 0 is what idle workers start from */
  atomic_store_explicit(&pool->job_fn, fn, memory_order_relaxed);
  atomic_store_explicit(&pool->job_arg, arg, memory_order_relaxed);
  atomic_store_explicit(&pool->job_cancel, cancel, memory_order_relaxed);
  atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
  /* Publishes the fields above (seq_cst: ordered before the sleepers load):
   * tasks [0, n_tasks) are open. */
  atomic_store(&pool->claim, (uint64_t)gen << 32 | n_tasks);
  /* a small job is left to the workers that are awake */
  if (!small && atomic_load(&pool->sleepers) > 0) {
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
  }
  in_task = true;
  size_t mine = run_tasks(pool, gen, 0);
  in_task = false;
  /* Closes the job: front past back. The tasks claimed are those before the
   * front and those from the back on. */
  uint64_t last =
      atomic_exchange_explicit(&pool->claim, (uint64_t)gen << 32 | CLOSED, memory_order_acq_rel);
  const size_t front = (size_t)(last >> 16) & 0xffffu, back = (size_t)last & 0xffffu;
  const size_t claimed = front + (n_tasks - back);
  wait_for_claimed(pool, claimed, mine, monotonic_ns() - t0);
  if (profiling) {
    pool->jobs++;
    pool->tasks += claimed;
    pool->parallel_ns += monotonic_ns() - t0;
  }
  return claimed == n_tasks;
}

void wick_thread_pool_set_profiling(wick_thread_pool *pool, bool enabled) {
  if (pool) atomic_store(&pool->profiling, enabled);
}

void wick_thread_pool_take_stats(wick_thread_pool *pool, wick_pool_stats *out) {
  memset(out, 0, sizeof *out);
  if (pool == NULL) return;
  out->jobs = pool->jobs;
  out->tasks = pool->tasks;
  out->parallel_ns = pool->parallel_ns;
  pool->jobs = pool->tasks = pool->parallel_ns = 0;
  for (size_t t = 0; t < pool->num_threads; t++) {
    out->busy_ns[t] = pool->busy[t].ns;
    pool->busy[t].ns = 0;
  }
}

/* ---------------------------------------------------------------- the op-facing API */

size_t wick_op_num_threads(const wick_op_ctx *ctx) {
  return wick_thread_pool_threads(ctx->graph->interp->pool);
}

wick_status wick_parallel_for_work(const wick_op_ctx *ctx, size_t n_tasks, uint64_t work,
                                   wick_task_fn fn, void *arg) {
  wick_interpreter *it = ctx->graph->interp;
  /* Cancellation applies to invoke; prepare (which folds constant nodes)
   * runs to the end. */
  const atomic_int *cancel = it->invoking ? &it->cancelled : NULL;
  if (wick_thread_pool_run(it->pool, n_tasks, work, fn, arg, cancel)) return WICK_OK;
  return wick_op_fail(ctx, WICK_ERR_CANCELLED, "invoke was cancelled inside the operator");
}

wick_status wick_parallel_for(const wick_op_ctx *ctx, size_t n_tasks, wick_task_fn fn, void *arg) {
  return wick_parallel_for_work(ctx, n_tasks, 0, fn, arg);
}

typedef struct range_job {
  wick_range_fn fn;
  void *arg;
  size_t units, tasks;
} range_job;

static void run_range(void *p, size_t task, size_t thread) {
  const range_job *j = p;
  j->fn(j->arg, wick_split_begin(j->units, j->tasks, task),
        wick_split_begin(j->units, j->tasks, task + 1), thread);
}

wick_status wick_parallel_range(const wick_op_ctx *ctx, size_t units, uint64_t work_per_unit,
                                wick_range_fn fn, void *arg) {
  if (units == 0) return WICK_OK;
  range_job j = {fn, arg, units, wick_split_count(units, work_per_unit, WICK_TASK_GRAIN)};
  uint64_t work;
  if (__builtin_mul_overflow((uint64_t)units, work_per_unit, &work)) work = UINT64_MAX;
  return wick_parallel_for_work(ctx, j.tasks, work ? work : 1, run_range, &j);
}
