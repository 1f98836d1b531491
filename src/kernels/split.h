/*
 * split.h — how a loop of `units` equal pieces of work is cut into tasks for
 * the thread pool (wick_parallel_range, row splits, GEMM row tiles).
 *
 * The count is the total work over the grain, rounded up, then made even:
 * with two threads claiming equal tasks an odd count leaves one thread idle
 * for a whole task at the end (7 tasks run as 4 + 3). The units are then
 * dealt out so that task sizes differ by at most one unit (14 rows in 4 tasks
 * are 4, 3, 4, 3, not 4, 4, 4, 2). Both depend on the shape alone, never on
 * the thread count, so results stay bit-identical for any number of threads.
 */
#ifndef WICK_KERNELS_SPLIT_H
#define WICK_KERNELS_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* Tasks are indexed in 32 bits by the pool; this many at most. */
#define WICK_SPLIT_MAX_TASKS ((size_t)1 << 30)

/* Tasks for `units` units of work_per_unit each, about `grain` per task. */
static inline size_t wick_split_count(size_t units, uint64_t work_per_unit, uint64_t grain) {
  if (units == 0) return 0;
  if (work_per_unit == 0) work_per_unit = 1;
  if (grain == 0) grain = 1;
  uint64_t total;
  if (__builtin_mul_overflow((uint64_t)units, work_per_unit, &total)) total = UINT64_MAX;
  uint64_t tasks = total / grain + (total % grain != 0);
  if (tasks < 1) tasks = 1;
  if (tasks > 1 && (tasks & 1u)) tasks++;
  if (tasks > units) tasks = units;
  if (tasks > WICK_SPLIT_MAX_TASKS) tasks = WICK_SPLIT_MAX_TASKS;
  return (size_t)tasks;
}

/* First unit of task t of `tasks` over [0, units); task t ends where t + 1
 * begins. */
static inline size_t wick_split_begin(size_t units, size_t tasks, size_t t) {
  const size_t q = units / tasks, r = units % tasks;
  return t * q + (t < r ? t : r);
}

#endif /* WICK_KERNELS_SPLIT_H */
