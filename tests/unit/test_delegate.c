/*
 * test_delegate.c — the delegate mechanism (src/core/delegate.c) with the
 * built-in test delegate "reference" (src/delegates/reference.c) and a "spy"
 * delegate written here that wraps it to count calls and fail on demand:
 *
 *   - partitioning on random DAGs of ADD/SUB (accepted) and MUL (declined), by
 *     one delegate or two in priority order: outputs bit-identical to a direct
 *     evaluation with and without injected prepare/invoke failures and minimum
 *     partition sizes; every partition's
 *     nodes are consecutive in the execution order and every node runs after
 *     the nodes it reads (so no partition has a path out through the CPU and
 *     back in), and the report says why each node is where it is;
 *   - hand-built graphs for the rules: the no-cycle rule splits A -> cpu -> C,
 *     a CPU reader between two accepted nodes is moved after their partition,
 *     independent branches share one partition;
 *   - fallback on tm_demo_chain: declined, prepare failed, invoke failed (the
 *     same invoke reruns the partition on the CPU, later invokes stay there),
 *     each with outputs identical to a CPU-only run, the report's reasons and
 *     log lines, and partitions freed exactly once (also across a resize);
 *   - the memory cap: over a range of caps, a create either fails with
 *     WICK_ERR_OUT_OF_MEMORY or runs with CPU-identical outputs, and some cap
 *     makes a delegate's prepare fail for memory while the CPU still runs;
 *   - cancellation from inside a partition, and before invoke;
 *   - one delegate (with injected invoke failures) shared by interpreters on two threads;
 *   - option checking (bad delegate structs), the name registry.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "tiny_model.h"
#include "wick/wick.h"

static int failures = 0, checks = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    checks++;                                              \
    if (!(cond)) {                                         \
      failures++;                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

enum { N = 16 }; /* elements per activation */

/* ---------------------------------------------------------------- the spy delegate */

typedef struct spy {
  wick_delegate base;
  wick_delegate *inner; /* the reference delegate doing the work */
  int prepares, frees, invokes;
  int fail_prepare_id, fail_invoke_id; /* partition id to fail, -1: none */
  wick_interpreter *cancel;            /* cancels this interpreter from inside invoke */
} spy;

static int spy_supports(wick_delegate *d, const wick_delegate_graph *g, size_t node, char *why,
                        size_t why_size) {
  spy *s = (spy *)(void *)d;
  return s->inner->supports_node(s->inner, g, node, why, why_size);
}

typedef struct spy_state {
  size_t id;
  void *inner;
} spy_state;

static wick_status spy_prepare(wick_delegate *d, const wick_delegate_graph *g,
                               const wick_delegate_partition *p, void **state_out, char *why,
                               size_t why_size) {
  spy *s = (spy *)(void *)d;
  s->prepares++;
  if ((int)p->id == s->fail_prepare_id) {
    snprintf(why, why_size, "spy says no");
    return WICK_ERR_UNSUPPORTED_OP;
  }
  spy_state *st = calloc(1, sizeof *st);
  st->id = p->id;
  wick_status r = s->inner->prepare_partition(s->inner, g, p, &st->inner, why, why_size);
  if (r != WICK_OK) {
    free(st);
    return r;
  }
  *state_out = st;
  return WICK_OK;
}

static wick_status spy_invoke(wick_delegate *d, const wick_delegate_graph *g, void *state,
                              char *why, size_t why_size) {
  spy *s = (spy *)(void *)d;
  spy_state *st = state;
  s->invokes++;
  if (s->cancel != NULL) {
    wick_interpreter_cancel(s->cancel);
    CHECK(wick_delegate_graph_cancelled(g) == 1, "the graph does not see the cancel");
    return WICK_ERR_CANCELLED;
  }
  if ((int)st->id == s->fail_invoke_id) {
    snprintf(why, why_size, "spy fails");
    return WICK_ERR_INVALID_INPUT;
  }
  return s->inner->invoke_partition(s->inner, g, st->inner, why, why_size);
}

static void spy_free(wick_delegate *d, void *state) {
  spy *s = (spy *)(void *)d;
  s->frees++;
  free(state);
}

static void spy_init(spy *s, const char *ops) {
  memset(s, 0, sizeof *s);
  wick_reference_delegate_options o = wick_reference_delegate_options_default();
  o.ops = ops;
  wick_error_info err;
  if (wick_reference_delegate_create(&o, &err, &s->inner) != WICK_OK) {
    fprintf(stderr, "reference delegate: %s\n", err.message);
    abort();
  }
  s->base.struct_size = sizeof s->base;
  s->base.name = "spy";
  s->base.supports_node = spy_supports;
  s->base.prepare_partition = spy_prepare;
  s->base.invoke_partition = spy_invoke;
  s->base.free_partition = spy_free;
  s->fail_prepare_id = s->fail_invoke_id = -1;
}

/* ---------------------------------------------------------------- DAG models */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static int32_t dag_elements = N; /* per activation in built models (evaluated ones: N) */

static void random_dag(tm_dag *d) {
  static const int ops[3] = {TM_OP_ADD, TM_OP_MUL, TM_OP_SUB};
  d->nops = 3 + (int)(next_u32() % 26);
  for (int i = 0; i < d->nops; i++) {
    d->op[i] = ops[next_u32() % 3];
    int span = (next_u32() % 3 == 0) ? i + 1 : (i + 1 < 4 ? i + 1 : 4);
    d->a[i] = i - (int)(next_u32() % (uint32_t)span);
    d->b[i] = i - (int)(next_u32() % (uint32_t)span);
  }
  d->nout = 1 + (int)(next_u32() % 3);
  d->outs[0] = d->nops;
  for (int i = 1; i < d->nout; i++) d->outs[i] = 1 + (int)(next_u32() % (uint32_t)d->nops);
}

/* The execution order keeps each partition's nodes together and every node after the nodes
 * whose results it reads. */
static void check_order(const wick_interpreter *it, const tm_dag *d, const char *what) {
  const wick_graph *g = it->main;
  uint32_t n = g->info->num_operators;
  for (uint32_t p = 0; p < g->num_partitions; p++) {
    const wick_partition *part = &g->partitions[p];
    uint32_t members = 0;
    for (uint32_t v = 0; v < n; v++) members += g->nodes[v].partition == (int32_t)p;
    CHECK(part->end - part->start == members, "%s: partition %u spans %u positions for %u nodes",
          what, p, part->end - part->start, members);
    for (uint32_t pos = part->start; pos < part->end; pos++)
      CHECK(g->nodes[wick_graph_node_at(g, pos)].partition == (int32_t)p,
            "%s: partition %u is not consecutive", what, p);
  }
  for (int i = 0; i < d->nops; i++) {
    uint32_t at = wick_graph_position(g, (uint32_t)i);
    if (d->a[i] > 0)
      CHECK(wick_graph_position(g, (uint32_t)d->a[i] - 1) < at, "%s: node %d runs before its input",
            what, i);
    if (d->b[i] > 0)
      CHECK(wick_graph_position(g, (uint32_t)d->b[i] - 1) < at, "%s: node %d runs before its input",
            what, i);
  }
}

static bool same_floats(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return false;
  return true;
}

/* Creates an interpreter over `model` with `delegate` (NULL: none). */
static wick_status make(const wick_model *model, wick_delegate *delegate, size_t cap,
                        wick_interpreter **it, wick_error_info *err) {
  wick_interpreter_options o = wick_interpreter_options_default();
  wick_delegate *list[1] = {delegate};
  o.delegates = list;
  o.num_delegates = delegate ? 1 : 0;
  o.memory_limit_bytes = cap;
  return wick_interpreter_create(model, NULL, &o, err, it);
}

static void run_dag_case(int which) {
  tm_dag d;
  random_dag(&d);
  size_t size;
  uint8_t *bytes = tm_dag_model(&d, dag_elements, &size);
  wick_error_info err;
  wick_model *model;
  if (wick_model_load_buffer(bytes, size, NULL, &err, &model) != WICK_OK) {
    CHECK(0, "dag %d: load: %s", which, err.message);
    free(bytes);
    return;
  }
  /* one delegate for ADD and SUB, or (every other case) two: ADD first, then SUB and, when
   * ADD's partitions are too small, ADD again through the second */
  bool two = which % 2 == 1;
  char config[2][128];
  wick_delegate *dels[2] = {NULL, NULL};
  for (int k = 0; k < (two ? 2 : 1); k++) {
    int fail_prepare = (int)(next_u32() % 4 == 0), fail_invoke = (int)(next_u32() % 3);
    int min = (int)(next_u32() % 4);
    snprintf(config[k], sizeof config[k],
             "ops=%s;fail_prepare=%d;fail_invoke=%d;min_partition_nodes=%d",
             !two     ? "ADD,SUB"
             : k == 0 ? "ADD"
                      : "SUB,ADD",
             fail_prepare, fail_invoke, min);
    CHECK(wick_delegate_create("reference", config[k], &err, &dels[k]) == WICK_OK, "create: %s",
          err.message);
  }
  const char *cfg = config[0];
  wick_interpreter *it;
  wick_interpreter_options opts = wick_interpreter_options_default();
  opts.delegates = dels;
  opts.num_delegates = two ? 2 : 1;
  wick_status st = wick_interpreter_create(model, NULL, &opts, &err, &it);
  CHECK(st == WICK_OK, "dag %d: create: %s", which, err.message);
  if (st == WICK_OK) {
    check_order(it, &d, "dag");
    for (int i = 0; i < d.nops; i++) {
      const char *why = wick_interpreter_op_delegation_reason(it, (size_t)i);
      int part = wick_interpreter_op_partition(it, (size_t)i);
      if (d.op[i] == TM_OP_MUL) {
        CHECK(part < 0 && strstr(why, "not in the accept set") != NULL,
              "dag %d: MUL node %d: partition %d, reason \"%s\"", which, i, part, why);
      } else if (part < 0) {
        CHECK(strstr(why, "below its minimum") != NULL || strstr(why, "partitions") != NULL,
              "dag %d: ADD/SUB node %d on the CPU with reason \"%s\"", which, i, why);
      }
    }
    float x[N];
    static float vals[TM_DAG_MAX_OPS + 1][N];
    for (int k = 0; k < N; k++) x[k] = 1.0f + (float)((int)(next_u32() % 200) - 100) / 1000.0f;
    tm_dag_evaluate(&d, x, N, vals[0]);
    wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x);
    for (int rep = 0; rep < 2; rep++) {
      st = wick_interpreter_invoke(it);
      CHECK(st == WICK_OK, "dag %d: invoke: %s", which, wick_interpreter_last_error(it));
      for (int o = 0; o < d.nout && st == WICK_OK; o++)
        CHECK(same_floats(wick_tensor_data(wick_interpreter_output(it, (size_t)o)), vals[d.outs[o]],
                          N),
              "dag %d (%d ops, %s%s) invoke %d: output %d differs", which, d.nops, cfg,
              two ? " + a second delegate" : "", rep, o);
    }
    wick_interpreter_destroy(it);
  }
  wick_delegate_destroy(dels[0]);
  wick_delegate_destroy(dels[1]);
  wick_model_destroy(model);
  free(bytes);
}

/* One hand-built DAG with the reference delegate on ADD and SUB: the partitions of its nodes. */
static void partitions_of(const tm_dag *d, int *parts, const char *what) {
  size_t size;
  uint8_t *bytes = tm_dag_model(d, dag_elements, &size);
  wick_error_info err;
  wick_model *model;
  wick_delegate *ref;
  wick_interpreter *it;
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &model) == WICK_OK, "%s", err.message);
  CHECK(wick_delegate_create("reference", "ops=ADD,SUB", &err, &ref) == WICK_OK, "%s", err.message);
  if (make(model, ref, 0, &it, &err) != WICK_OK) {
    CHECK(0, "%s: create: %s", what, err.message);
  } else {
    check_order(it, d, what);
    for (int i = 0; i < d->nops; i++) parts[i] = wick_interpreter_op_partition(it, (size_t)i);
    float x[N];
    static float vals[TM_DAG_MAX_OPS + 1][N];
    for (int k = 0; k < N; k++) x[k] = (float)k / 8.0f - 1.0f;
    tm_dag_evaluate(d, x, N, vals[0]);
    wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x);
    CHECK(wick_interpreter_invoke(it) == WICK_OK, "%s: invoke", what);
    for (int o = 0; o < d->nout; o++)
      CHECK(same_floats(wick_tensor_data(wick_interpreter_output(it, (size_t)o)), vals[d->outs[o]],
                        N),
            "%s: output %d differs", what, o);
    wick_interpreter_destroy(it);
  }
  wick_delegate_destroy(ref);
  wick_model_destroy(model);
  free(bytes);
}

static void test_partition_rules(void) {
  int p[28];
  /* A -> cpu -> C and A -> C: one partition would need the CPU node inside it. */
  tm_dag cycle = {3, {TM_OP_ADD, TM_OP_MUL, TM_OP_ADD}, {0, 1, 2}, {0, 1, 1}, 1, {3}};
  partitions_of(&cycle, p, "cycle");
  CHECK(p[0] >= 0 && p[2] >= 0 && p[0] != p[2] && p[1] < 0,
        "cycle: partitions %d %d %d, want two and the CPU between", p[0], p[1], p[2]);
  /* A -> cpu, A -> C (the CPU node reads A only): A and C share a partition; the CPU node
   * runs after it. */
  tm_dag moved = {3, {TM_OP_ADD, TM_OP_MUL, TM_OP_SUB}, {0, 1, 1}, {0, 0, 0}, 2, {2, 3}};
  partitions_of(&moved, p, "moved");
  CHECK(p[0] >= 0 && p[0] == p[2] && p[1] < 0, "moved: partitions %d %d %d, want one", p[0], p[1],
        p[2]);
  /* two independent branches, joined on the CPU */
  tm_dag branches = {3, {TM_OP_ADD, TM_OP_SUB, TM_OP_MUL}, {0, 0, 1}, {0, 0, 2}, 1, {3}};
  partitions_of(&branches, p, "branches");
  CHECK(p[0] >= 0 && p[0] == p[1] && p[2] < 0, "branches: partitions %d %d %d, want one", p[0],
        p[1], p[2]);
  /* a chain through the CPU twice: three partitions */
  tm_dag zigzag = {5,
                   {TM_OP_ADD, TM_OP_MUL, TM_OP_ADD, TM_OP_MUL, TM_OP_SUB},
                   {0, 1, 2, 3, 4},
                   {0, 1, 2, 3, 1},
                   1,
                   {5}};
  partitions_of(&zigzag, p, "zigzag");
  CHECK(p[0] >= 0 && p[2] >= 0 && p[4] >= 0 && p[0] != p[2] && p[2] != p[4] && p[0] != p[4],
        "zigzag: partitions %d %d %d", p[0], p[2], p[4]);
}

/* ---------------------------------------------------------------- fallback on the demo chain */

typedef struct log_box {
  int warnings;
  char last[512];
} log_box;

static void capture(void *user, wick_log_level level, const char *message) {
  log_box *b = user;
  if (level >= WICK_LOG_WARNING) {
    b->warnings++;
    snprintf(b->last, sizeof b->last, "%s", message);
  }
}

static size_t output_floats(const wick_interpreter *it, float *out) {
  size_t n = 0;
  for (size_t o = 0; o < wick_interpreter_output_count(it); o++) {
    const wick_tensor *t = wick_interpreter_output(it, o);
    memcpy(out + n, wick_tensor_data(t), wick_tensor_byte_size(t));
    n += wick_tensor_byte_size(t) / sizeof(float);
  }
  return n;
}

static void fill_input(wick_interpreter *it) {
  float x[32];
  for (int i = 0; i < 32; i++) x[i] = tm_val(i * 3 + 1);
  wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x);
}

/* tm_demo_chain's model, its bytes in *bytes (free them after the model). */
static wick_model *load_demo_chain(uint8_t **bytes) {
  size_t size;
  wick_error_info err;
  wick_model *model = NULL;
  *bytes = tm_demo_chain(&size);
  CHECK(wick_model_load_buffer(*bytes, size, NULL, &err, &model) == WICK_OK, "%s", err.message);
  return model;
}

static void test_fallback(void) {
  uint8_t *bytes;
  wick_model *model = load_demo_chain(&bytes);
  wick_error_info err;
  float cpu[256], cpu_ref[256], got[256];
  wick_interpreter *it;
  CHECK(make(model, NULL, 0, &it, &err) == WICK_OK, "%s", err.message);
  fill_input(it);
  wick_interpreter_invoke(it);
  size_t n = output_floats(it, cpu);
  CHECK(wick_interpreter_op_delegate(it, 0) == NULL, "no delegates: op 0 on a delegate");
  CHECK(strcmp(wick_interpreter_op_delegation_reason(it, 0), "") == 0,
        "no delegates: a reason \"%s\"", wick_interpreter_op_delegation_reason(it, 0));
  CHECK(wick_interpreter_partition_count(it) == 0, "no delegates: partitions");
  wick_interpreter_destroy(it);
  wick_interpreter_options ro = wick_interpreter_options_default();
  ro.force_reference_kernels = 1;
  CHECK(wick_interpreter_create(model, NULL, &ro, &err, &it) == WICK_OK, "%s", err.message);
  fill_input(it);
  wick_interpreter_invoke(it);
  output_floats(it, cpu_ref);
  wick_interpreter_destroy(it);

  /* cases: 0 delegated, 1 prepare fails, 2 invoke fails, 3 everything declined */
  for (int c = 0; c < 4; c++) {
    spy s;
    spy_init(&s, c == 3 ? "EXP" : NULL);
    if (c == 1) s.fail_prepare_id = 0;
    if (c == 2) s.fail_invoke_id = 0;
    log_box logs = {0};
    wick_interpreter_options o = wick_interpreter_options_default();
    wick_delegate *list[1] = {&s.base};
    o.delegates = list;
    o.num_delegates = 1;
    o.log = capture;
    o.log_user = &logs;
    o.force_reference_kernels = c == 0; /* delegated: compared with the reference kernels */
    CHECK(wick_interpreter_create(model, NULL, &o, &err, &it) == WICK_OK, "case %d: %s", c,
          err.message);
    size_t ops = wick_interpreter_op_count(it);
    size_t on_spy = 0;
    for (size_t i = 0; i < ops; i++) on_spy += wick_interpreter_op_delegate(it, i) != NULL;
    /* RESHAPE -> FULLY_CONNECTED -> ADD -> SOFTMAX is the one partition */
    size_t want_parts = c == 3 ? 0 : 1;
    CHECK(wick_interpreter_partition_count(it) == want_parts, "case %d: %zu partitions", c,
          wick_interpreter_partition_count(it));
    CHECK(on_spy == (c == 0 || c == 2 ? 4u : 0u), "case %d: %zu ops on the delegate", c, on_spy);
    CHECK(s.prepares == (c == 3 ? 0 : 1), "case %d: %d prepares", c, s.prepares);
    const char *conv_why = wick_interpreter_op_delegation_reason(it, 0);
    CHECK(strstr(conv_why, "spy: op CONV_2D is not implemented") != NULL, "case %d: CONV: \"%s\"",
          c, conv_why);
    if (c == 1) {
      CHECK(strstr(wick_interpreter_op_delegation_reason(it, 3), "prepare failed: spy says no"),
            "prepare failure reason: \"%s\"", wick_interpreter_op_delegation_reason(it, 3));
      CHECK(logs.warnings == 1 && strstr(logs.last, "spy says no"), "prepare failure log: %s",
            logs.last);
    }
    if (c == 3)
      CHECK(strstr(wick_interpreter_op_delegation_reason(it, 3), "not in the accept set"),
            "declined reason: \"%s\"", wick_interpreter_op_delegation_reason(it, 3));
    for (int rep = 0; rep < 2; rep++) {
      fill_input(it);
      CHECK(wick_interpreter_invoke(it) == WICK_OK, "case %d: invoke: %s", c,
            wick_interpreter_last_error(it));
      CHECK(output_floats(it, got) == n, "case %d: output size", c);
      if (c == 0) {
        CHECK(same_floats(got, cpu_ref, n),
              "case %d: delegated outputs differ from the CPU's "
              "reference kernels",
              c);
        for (size_t i = 0; i < n; i++)
          CHECK(fabsf(got[i] - cpu[i]) <= 1e-5f * fmaxf(1.0f, fabsf(cpu[i])),
                "case %d: output %zu: %g vs the CPU's %g", c, i, (double)got[i], (double)cpu[i]);
      } else {
        CHECK(same_floats(got, cpu, n), "case %d invoke %d: outputs differ from CPU-only", c, rep);
      }
    }
    if (c == 2) {
      CHECK(s.invokes == 1, "a failed partition was retried: %d invokes", s.invokes);
      CHECK(wick_interpreter_op_delegate(it, 3) == NULL, "after an invoke failure op 3 on %s",
            wick_interpreter_op_delegate(it, 3));
      CHECK(strstr(wick_interpreter_op_delegation_reason(it, 3), "invoke failed: spy fails"),
            "invoke failure reason: \"%s\"", wick_interpreter_op_delegation_reason(it, 3));
      CHECK(logs.warnings == 1, "invoke failure: %d warnings", logs.warnings);
      /* a resize prepares again: the partition is back on the delegate */
      int32_t dims[4] = {1, 4, 4, 2};
      CHECK(wick_interpreter_resize_input(it, 0, dims, 4) == WICK_OK, "resize: %s",
            wick_interpreter_last_error(it));
      CHECK(wick_interpreter_op_delegate(it, 3) != NULL, "after a resize op 3 is not delegated");
      CHECK(s.frees == 1, "resize freed %d partitions, want 1", s.frees);
    }
    wick_interpreter_destroy(it);
    CHECK(s.frees == (c == 2   ? 2
                      : c == 0 ? 1
                               : 0),
          "case %d: %d frees for %d prepares", c, s.frees, s.prepares);
    wick_delegate_destroy(s.inner);
  }
  wick_model_destroy(model);
  free(bytes);
}

/* ---------------------------------------------------------------- memory cap, cancel, options */

static void test_memory_cap(void) {
  /* A chain of ADDs on 16 KiB activations: the delegate's private buffers (one per tensor of
   * the partition) need far more than the CPU's arena (two ping-pong buffers). */
  tm_dag d = {0};
  d.nops = 12;
  for (int i = 0; i < d.nops; i++) d.op[i] = TM_OP_ADD, d.a[i] = i, d.b[i] = 0;
  d.nout = 1;
  d.outs[0] = d.nops;
  dag_elements = 4096;
  size_t size;
  uint8_t *bytes = tm_dag_model(&d, dag_elements, &size);
  dag_elements = N;
  wick_error_info err;
  wick_model *model;
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &model) == WICK_OK, "%s", err.message);
  static float x[4096], cpu[4096];
  for (int i = 0; i < 4096; i++) x[i] = tm_val(i);
  wick_interpreter *it;
  CHECK(make(model, NULL, 0, &it, &err) == WICK_OK, "%s", err.message);
  wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x);
  wick_interpreter_invoke(it);
  memcpy(cpu, wick_tensor_data(wick_interpreter_output(it, 0)), sizeof cpu);
  wick_interpreter_destroy(it);
  wick_delegate *ref;
  CHECK(wick_delegate_create("reference", NULL, &err, &ref) == WICK_OK, "%s", err.message);
  int fell_back_for_memory = 0, delegated = 0, refused = 0;
  for (size_t cap = 16384; cap < 1200000; cap += 8192) {
    wick_status st = make(model, ref, cap, &it, &err);
    if (st != WICK_OK) {
      CHECK(st == WICK_ERR_OUT_OF_MEMORY, "cap %zu: %s", cap, err.message);
      refused++;
      continue;
    }
    if (strstr(wick_interpreter_op_delegation_reason(it, 0), "out of memory"))
      fell_back_for_memory++;
    else
      delegated += wick_interpreter_op_delegate(it, 0) != NULL;
    wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x);
    st = wick_interpreter_invoke(it);
    CHECK(st == WICK_OK, "cap %zu: invoke: %s", cap, wick_interpreter_last_error(it));
    if (st == WICK_OK)
      CHECK(same_floats(wick_tensor_data(wick_interpreter_output(it, 0)), cpu, 4096),
            "cap %zu: outputs differ from CPU-only", cap);
    CHECK(it->mem.used <= cap, "cap %zu: %zu bytes used", cap, it->mem.used);
    wick_interpreter_destroy(it);
    if (delegated > 0) break;
  }
  CHECK(refused > 0, "every cap let the interpreter run");
  CHECK(fell_back_for_memory > 0, "no cap made the delegate's prepare fail for memory");
  CHECK(delegated > 0, "no cap up to 1.2 MB let the delegate prepare");
  wick_delegate_destroy(ref);
  wick_model_destroy(model);
  free(bytes);
}

static void test_cancel(void) {
  uint8_t *bytes;
  wick_model *model = load_demo_chain(&bytes);
  wick_error_info err;
  spy s;
  spy_init(&s, NULL);
  wick_interpreter *it;
  CHECK(make(model, &s.base, 0, &it, &err) == WICK_OK, "%s", err.message);
  fill_input(it);
  s.cancel = it;
  CHECK(wick_interpreter_invoke(it) == WICK_ERR_CANCELLED, "a cancel inside a partition: %s",
        wick_interpreter_last_error(it));
  CHECK(wick_interpreter_op_delegate(it, 3) != NULL, "a cancel turned the partition off");
  s.cancel = NULL;
  CHECK(wick_interpreter_invoke(it) == WICK_OK, "invoke after the cancel: %s",
        wick_interpreter_last_error(it));
  wick_interpreter_cancel(it);
  int before = s.invokes;
  CHECK(wick_interpreter_invoke(it) == WICK_ERR_CANCELLED, "cancel before invoke");
  CHECK(s.invokes == before, "the partition ran after a cancel");
  wick_interpreter_destroy(it);
  wick_delegate_destroy(s.inner);
  wick_model_destroy(model);
  free(bytes);
}

static void test_options(void) {
  uint8_t *bytes;
  wick_model *model = load_demo_chain(&bytes);
  wick_error_info err;
  spy s;
  spy_init(&s, NULL);
  wick_interpreter *it;
  wick_interpreter_options o = wick_interpreter_options_default();
  wick_delegate *list[2] = {&s.base, NULL};
  o.delegates = list;
  o.num_delegates = 2;
  CHECK(wick_interpreter_create(model, NULL, &o, &err, &it) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(err.message, "delegates[1] is NULL"),
        "a NULL delegate: %s", err.message);
  o.num_delegates = 1;
  s.base.struct_size = 8;
  CHECK(wick_interpreter_create(model, NULL, &o, &err, &it) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(err.message, "struct_size"),
        "a small struct: %s", err.message);
  s.base.struct_size = sizeof s.base;
  s.base.invoke_partition = NULL;
  CHECK(wick_interpreter_create(model, NULL, &o, &err, &it) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(err.message, "callback"),
        "no invoke callback: %s", err.message);
  o.delegates = NULL;
  CHECK(wick_interpreter_create(model, NULL, &o, &err, &it) == WICK_ERR_INVALID_ARGUMENT,
        "a NULL list with a count");
  wick_delegate_destroy(s.inner);

  wick_delegate *d = NULL;
  CHECK(wick_delegate_create("vulkan", NULL, &err, &d) == WICK_ERR_INVALID_ARGUMENT && d == NULL &&
            strstr(err.message, "no delegate called \"vulkan\"") &&
            strstr(err.message, "reference") && strstr(err.message, "nnapi"),
        "unknown name: %s", err.message);
  CHECK(wick_delegate_create("reference", "bogus=1", &err, &d) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(err.message, "bogus"),
        "unknown setting: %s", err.message);
  CHECK(wick_delegate_create("reference", "ops=CONV_3D", &err, &d) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(err.message, "CONV_3D"),
        "unknown op: %s", err.message);
  CHECK(wick_delegate_create("reference", "ops", &err, &d) == WICK_ERR_INVALID_ARGUMENT,
        "a setting without '='");
  CHECK(strcmp(wick_delegate_builtin_name(0), "reference") == 0 &&
            strcmp(wick_delegate_builtin_name(1), "nnapi") == 0 &&
            wick_delegate_builtin_name(2) == NULL,
        "builtin names");
  wick_delegate_destroy(NULL);
  /* the view's option accessor */
  CHECK(wick_delegate_create("reference", NULL, &err, &d) == WICK_OK, "%s", err.message);
  CHECK(make(model, d, 0, &it, &err) == WICK_OK, "%s", err.message);
  const wick_delegate_graph *g = (const wick_delegate_graph *)(const void *)it->main;
  double v = -1;
  CHECK(wick_delegate_graph_node_option(g, 0, WICK_OPTION_FUSED_ACTIVATION, &v) == 1 && v == 1,
        "CONV_2D activation %g", v);
  CHECK(wick_delegate_graph_node_option(g, 0, WICK_OPTION_STRIDE_W, &v) == 1 && v == 1,
        "CONV_2D stride %g", v);
  CHECK(wick_delegate_graph_node_option(g, 1, WICK_OPTION_FILTER_H, &v) == 1 && v == 2,
        "MAX_POOL filter %g", v);
  CHECK(wick_delegate_graph_node_option(g, 5, WICK_OPTION_BETA, &v) == 1 && v == 1,
        "SOFTMAX beta %g", v);
  CHECK(wick_delegate_graph_node_option(g, 5, WICK_OPTION_STRIDE_W, &v) == 0,
        "SOFTMAX has no stride");
  CHECK(wick_delegate_graph_node_option(g, 99, WICK_OPTION_BETA, &v) == 0, "node out of range");
  CHECK(wick_delegate_graph_node_builtin(g, 0) == 3 &&
            strcmp(wick_delegate_graph_node_name(g, 0), "CONV_2D") == 0 &&
            wick_delegate_graph_node_version(g, 0) == 1,
        "node 0 identity");
  int32_t w = wick_delegate_graph_node_input(g, 0, 1);
  CHECK(wick_tensor_is_constant(wick_delegate_graph_tensor(g, w)) == 1 &&
            wick_tensor_is_constant(wick_delegate_graph_tensor(g, 0)) == 0,
        "constness");
  CHECK(wick_delegate_graph_tensor(g, -1) == NULL && wick_delegate_graph_node_input(g, 0, 9) == -1,
        "out of range tensors");
  wick_interpreter_destroy(it);
  wick_delegate_destroy(d);
  wick_model_destroy(model);
  free(bytes);
}

typedef struct shared_run {
  const wick_model *model;
  wick_delegate *delegate;
  const float *want;
  size_t n;
  int bad;
} shared_run;

static void *run_shared(void *arg) {
  shared_run *r = arg;
  wick_error_info err;
  wick_interpreter *it;
  if (make(r->model, r->delegate, 0, &it, &err) != WICK_OK) {
    r->bad = 1000;
    return NULL;
  }
  float got[256];
  for (int k = 0; k < 30; k++) {
    fill_input(it);
    if (wick_interpreter_invoke(it) != WICK_OK) r->bad++;
    output_floats(it, got);
    for (size_t i = 0; i < r->n; i++)
      if (fabsf(got[i] - r->want[i]) > 1e-5f * fmaxf(1.0f, fabsf(r->want[i]))) {
        r->bad++;
        break;
      }
  }
  wick_interpreter_destroy(it);
  return NULL;
}

static void test_shared_across_threads(void) {
  uint8_t *bytes;
  wick_model *model = load_demo_chain(&bytes);
  wick_error_info err;
  float cpu[256];
  wick_interpreter *it;
  CHECK(make(model, NULL, 0, &it, &err) == WICK_OK, "%s", err.message);
  fill_input(it);
  wick_interpreter_invoke(it);
  size_t n = output_floats(it, cpu);
  wick_interpreter_destroy(it);
  wick_delegate *d;
  CHECK(wick_delegate_create("reference", "fail_invoke=1;fail_prepare=1", &err, &d) == WICK_OK,
        "%s", err.message);
  shared_run runs[2] = {{model, d, cpu, n, 0}, {model, d, cpu, n, 0}};
  pthread_t threads[2];
  for (int t = 0; t < 2; t++) pthread_create(&threads[t], NULL, run_shared, &runs[t]);
  for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
  CHECK(runs[0].bad == 0 && runs[1].bad == 0, "shared delegate: %d and %d bad invokes", runs[0].bad,
        runs[1].bad);
  wick_delegate_destroy(d);
  wick_model_destroy(model);
  free(bytes);
}

int main(void) {
  for (int i = 0; i < 400; i++) run_dag_case(i);
  test_partition_rules();
  test_fallback();
  test_memory_cap();
  test_cancel();
  test_options();
  test_shared_across_threads();
  printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
