/*
 * test_op_sweep.c — every operator variant on every kernel set this host can run, against
 * the reference kernels: one command, one table (in the spirit of ggml's test-backend-ops).
 *
 * Each case builds a one-operator model in memory (tiny_model.h; a few run a ready-made graph
 * of it instead), fills its inputs from a generator seeded by the case's name, and runs it once
 * per kernel set:
 *
 *   reference   force_reference_kernels = 1, every ISA flag hidden, 1 thread: the baseline
 *   portable    no ISA (WICK_MAX_ISA=reference) but not forced: the ops' portable fast paths
 *   <level>     each ISA level of src/kernels/cpu.c above "reference" (x86-64: avx2, avx512,
 *               avx512vnni, avx512amx; AArch64: neon, neondot), the host's flags capped there
 *               (wick_cpu_set_features_for_testing: the same cap as WICK_MAX_ISA=<level>)
 *   ref-3t      the reference kernels on 3 threads, bit for bit against the baseline
 *   best-3t     the best level on 3 threads, bit for bit against that level on 1 thread
 *               (outputs are bit-identical for every thread count: wick.h)
 *
 * Each cell compares the set's outputs with the baseline: integer (and bool) outputs bit for
 * bit; float outputs bit for bit where the optimized kernels are documented bit-identical to
 * the reference (src/kernels/template/elementwise.h: the RELU family, HARD_SWISH, the binary
 * arithmetic ops, the pools; kernels.h: QUANTIZE / DEQUANTIZE; copies), else within
 * max |got - ref| <= 1e-5 * max(1, max |ref|) (docs/testing.md, "Parity bars"). A cell reads
 * "ok" (identical), "~3e-07" (within the tolerance: the largest relative error), "DIFF ..."
 * (outside it, or any integer difference: the largest one), "ERR" (the set failed where the
 * reference ran), or "-" (the host lacks the level, or this build its kernels; WICK_MAX_ISA
 * caps what counts as the host). Details of every DIFF and ERR follow the table, and of every weak
 * case (the reference's output constant or mostly saturated: its scales would make it check
 * little); the exit status is 1 if there is any. Then the coverage: which op_table.inc entries no
 * case runs (informational).
 *
 * Run: build/tests/unit/test_op_sweep [OP_SUBSTRING] (ctest and `make op-sweep` run it all).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/op_api.h"
#include "format/schema.h"
#include "kernels/cpu.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"
#include "tiny_model.h"
#include "wick/wick.h"

/* ---------------------------------------------------------------- kernel sets */

#define MAX_SETS 12
typedef struct kernel_set {
  char name[16];
  uint32_t features;
  bool force_reference;
  int threads;
  int baseline; /* the set this one is compared with (0: the reference) */
  bool exact;   /* compared bit for bit whatever the case's tolerance */
  bool available;
} kernel_set;

static kernel_set sets[MAX_SETS];
static int num_sets;
static uint32_t host_features;

static kernel_set *add_set(const char *name, uint32_t features, bool force_reference, int threads) {
  kernel_set *k = &sets[num_sets++];
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%s", name);
  k->features = features;
  k->force_reference = force_reference;
  k->threads = threads;
  k->available = true;
  return k;
}

static void make_sets(void) {
  host_features = wick_cpu_features(); /* capped by WICK_MAX_ISA when it is set */
  add_set("reference", 0, true, 1);
  add_set("portable", 0, false, 1);
  int best = 1;
  for (size_t i = 1; wick_cpu_level_at(i) != NULL; i++) {
    const wick_cpu_level *level = wick_cpu_level_at(i);
    kernel_set *k = add_set(level->name, host_features & level->keeps, false, 1);
    /* the host runs the level's instructions and this build has kernels for it (a 32-bit x86
     * build has none) */
    k->available = (host_features & level->needs) == level->needs &&
                   (wick_f32_kernels_for_isa(level->name) != NULL ||
                    wick_q8_kernels_for_isa(level->name) != NULL);
    if (k->available) best = num_sets - 1;
  }
  kernel_set *k = add_set("ref-3t", 0, true, 3);
  k->exact = true;
  k = add_set("best-3t", sets[best].features, false, 3);
  k->baseline = best;
  k->exact = true;
}

/* ---------------------------------------------------------------- cases */

#define MAX_INPUTS 8
#define MAX_OUTPUTS 4
typedef struct case_input {
  int32_t tensor;
  wick_dtype type;
  size_t count;
  double lo, hi; /* the values drawn: uniform reals (float) or integers (others) */
} case_input;

typedef struct sweep_case {
  tm_builder *b;
  tm_graph g;
  const char *op;
  char variant[72];
  double tol; /* float outputs: relative tolerance; 0: bit for bit */
  case_input in[MAX_INPUTS];
  size_t nin;
  int32_t out[MAX_OUTPUTS];
  size_t nout;
  uint32_t rng;
  bool skip;         /* filtered out on the command line */
  bool constant_ok;  /* a constant output is the op's point (FILL, ZEROS_LIKE) */
  uint8_t *prebuilt; /* a ready-made model (malloc'd) instead of the one built here */
  size_t prebuilt_size;
} sweep_case;

#define TOL_FLOAT 1e-5
#define EXACT 0.0

static const char *op_filter; /* argv[1]: only ops whose name contains it */

/* The shape of a tensor as (array, rank): S(1, 4, 4, 3). */
#define S(...) \
  (const int32_t[]){__VA_ARGS__}, sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t)

static uint32_t next_random(sweep_case *c) {
  uint32_t x = c->rng;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return c->rng = x;
}
static double uniform(sweep_case *c) { return (next_random(c) >> 8) * (1.0 / 16777216.0); }

static size_t elements(const int32_t *shape, size_t rank) {
  size_t n = 1;
  for (size_t i = 0; i < rank; i++) n *= (size_t)shape[i];
  return n;
}

static size_t type_size(wick_dtype t) { return wick_dtype_size(t); }

/* Fills n values of type t drawn from [lo, hi] (integers: rounded bounds). */
static void fill_random(sweep_case *c, wick_dtype t, void *data, size_t n, double lo, double hi) {
  for (size_t i = 0; i < n; i++) {
    double u = uniform(c);
    int64_t v = (int64_t)floor(lo + u * (hi - lo + 1.0));
    if (v > (int64_t)hi) v = (int64_t)hi;
    switch (t) {
      case WICK_DTYPE_FLOAT32: ((float *)data)[i] = (float)(lo + u * (hi - lo)); break;
      case WICK_DTYPE_COMPLEX64: /* (re, im) */
        ((float *)data)[2 * i] = (float)(lo + u * (hi - lo));
        ((float *)data)[2 * i + 1] = (float)(lo + uniform(c) * (hi - lo));
        break;
      case WICK_DTYPE_FLOAT16: { /* a normal half in [2^-5, 2^6), either sign */
        uint16_t h = (uint16_t)(((next_random(c) & 1u) << 15) |
                                ((10u + next_random(c) % 11u) << 10) | (next_random(c) & 0x3ffu));
        ((uint16_t *)data)[i] = h;
        break;
      }
      case WICK_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
      case WICK_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
      case WICK_DTYPE_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
      case WICK_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
      case WICK_DTYPE_INT64: ((int64_t *)data)[i] = v; break;
      case WICK_DTYPE_BOOL: ((uint8_t *)data)[i] = (uint8_t)(next_random(c) & 1u); break;
      default: fprintf(stderr, "fill_random: type %d\n", (int)t); abort();
    }
  }
}

/* The full range of an integer type (lo, hi). */
static void type_range(wick_dtype t, double *lo, double *hi) {
  switch (t) {
    case WICK_DTYPE_INT8: *lo = -128, *hi = 127; break;
    case WICK_DTYPE_UINT8: *lo = 0, *hi = 255; break;
    case WICK_DTYPE_INT16: *lo = -32768, *hi = 32767; break;
    default: *lo = -2, *hi = 2; break;
  }
}
#define FULL NAN /* lo = FULL: the type's whole range (floats: [-2, 2]) */

static void case_begin(sweep_case *c, const char *op, double tol, const char *fmt, ...) {
  memset(c, 0, sizeof *c);
  c->b = tm_new();
  tm_graph_init(&c->g, c->b);
  c->op = op;
  c->tol = tol;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->variant, sizeof c->variant, fmt, ap);
  va_end(ap);
  uint32_t h = 2166136261u; /* FNV-1a of "op/variant": each case's data stands alone */
  for (const char *p = op; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
  for (const char *p = c->variant; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
  c->rng = h ? h : 1;
  c->skip = op_filter != NULL && strstr(op, op_filter) == NULL;
}

static int32_t add_tensor(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                          uint32_t buffer, tm_node *quant) {
  char name[16];
  snprintf(name, sizeof name, "t%zu", c->g.nt);
  c->g.tensors[c->g.nt] = tm_tensor(c->b, name, (int)type, shape, rank, buffer, quant);
  return (int32_t)c->g.nt++;
}

/* A graph input of `type` and shape, its values drawn from [lo, hi] (lo FULL: the type's). */
static int32_t input(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                     tm_node *quant, double lo, double hi) {
  if (isnan(lo)) type_range(type, &lo, &hi);
  case_input *in = &c->in[c->nin++];
  in->tensor = add_tensor(c, type, shape, rank, 0, quant);
  in->type = type;
  in->count = elements(shape, rank);
  in->lo = lo;
  in->hi = hi;
  return in->tensor;
}

static int32_t constant(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                        tm_node *quant, const void *data) {
  c->g.buffers[c->g.nbuf] = tm_buffer(c->b, data, elements(shape, rank) * type_size(type));
  return add_tensor(c, type, shape, rank, (uint32_t)c->g.nbuf++, quant);
}

/* A constant with random values from [lo, hi] (lo FULL: the type's range). */
static int32_t random_constant(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                               tm_node *quant, double lo, double hi) {
  if (isnan(lo)) type_range(type, &lo, &hi);
  size_t n = elements(shape, rank);
  void *data = tm_xalloc(n * type_size(type));
  fill_random(c, type, data, n, lo, hi);
  int32_t t = constant(c, type, shape, rank, quant, data);
  free(data);
  return t;
}

static int32_t const_i32(sweep_case *c, const int32_t *shape, size_t rank, const int32_t *v) {
  return constant(c, WICK_DTYPE_INT32, shape, rank, NULL, v);
}

/* A graph output; its shape is the op's to set (the declared one is a placeholder). */
static int32_t output(sweep_case *c, wick_dtype type, tm_node *quant) {
  static const int32_t one[1] = {1};
  int32_t t = add_tensor(c, type, one, 1, 0, quant);
  c->out[c->nout++] = t;
  return t;
}

/* A graph output with its declared shape (per-channel quantization is checked against it). */
static int32_t shaped_output(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                             tm_node *quant) {
  int32_t t = add_tensor(c, type, shape, rank, 0, quant);
  c->out[c->nout++] = t;
  return t;
}

static tm_node *q(sweep_case *c, float scale, int64_t zero_point) {
  return tm_quant(c->b, &scale, &zero_point, 1, 0);
}
/* Per-channel symmetric quantization of n channels along `dim`, scales `scales`. */
static tm_node *q_channels(sweep_case *c, const float *scales, size_t n, int32_t dim) {
  int64_t zero[256] = {0};
  if (n > 256) abort();
  return tm_quant(c->b, scales, zero, n, dim);
}
/* n per-channel scales around `base` (0.6x .. 1.4x). */
static void channel_scales(float *scales, size_t n, float base) {
  for (size_t i = 0; i < n; i++) scales[i] = base * (0.6f + 0.1f * (float)(i % 9));
}

/* The one operator of the model: `outs` (its outputs, graph outputs in that order). */
static void op(sweep_case *c, int32_t builtin, const int32_t *ins, size_t nin, uint8_t opt_type,
               tm_node *opts) {
  tm_g_op(&c->g, builtin, ins, nin, c->out, c->nout, opt_type, opts);
}

/* ---------------------------------------------------------------- running and comparing */

typedef struct run_output {
  wick_dtype type;
  size_t rank;
  int32_t dims[WICK_MAX_RANK];
  size_t bytes;
  uint8_t *data;
} run_output;

typedef struct run_result {
  bool ok;
  char error[640];
  run_output out[MAX_OUTPUTS];
  size_t nout;
} run_result;

static void run_free(run_result *r) {
  for (size_t i = 0; i < r->nout; i++) free(r->out[i].data);
  memset(r, 0, sizeof *r);
}

static void run_set(const uint8_t *bytes, size_t size, const sweep_case *c, void *const *in_data,
                    const kernel_set *k, run_result *r) {
  memset(r, 0, sizeof *r);
  wick_cpu_set_features_for_testing(k->features);
  wick_error_info err;
  wick_model *model = NULL;
  wick_interpreter *it = NULL;
  wick_status st = wick_model_load_buffer(bytes, size, NULL, &err, &model);
  if (st != WICK_OK) {
    snprintf(r->error, sizeof r->error, "load: %s", err.message);
    return;
  }
  wick_interpreter_options o = wick_interpreter_options_default();
  o.force_reference_kernels = k->force_reference;
  o.num_threads = k->threads;
  st = wick_interpreter_create(model, NULL, &o, &err, &it);
  if (st != WICK_OK) {
    snprintf(r->error, sizeof r->error, "create: %s", err.message);
    wick_model_destroy(model);
    return;
  }
  for (size_t i = 0; i < c->nin; i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    st = wick_tensor_copy_from(t, in_data[i], c->in[i].count * type_size(c->in[i].type));
    if (st != WICK_OK) {
      snprintf(r->error, sizeof r->error, "input %zu: %s", i, wick_interpreter_last_error(it));
      goto done;
    }
  }
  st = wick_interpreter_invoke(it);
  if (st != WICK_OK) {
    snprintf(r->error, sizeof r->error, "invoke: %s", wick_interpreter_last_error(it));
    goto done;
  }
  r->nout = wick_interpreter_output_count(it);
  for (size_t i = 0; i < r->nout && i < MAX_OUTPUTS; i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    run_output *out = &r->out[i];
    out->type = wick_tensor_dtype(t);
    out->rank = wick_tensor_rank(t);
    for (size_t d = 0; d < out->rank; d++) out->dims[d] = wick_tensor_dim(t, d);
    out->bytes = wick_tensor_byte_size(t);
    out->data = tm_xalloc(out->bytes);
    if (out->bytes) memcpy(out->data, wick_tensor_data(t), out->bytes);
  }
  r->ok = true;
done:
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
}

enum { CELL_SAME, CELL_CLOSE, CELL_DIFF, CELL_ERR, CELL_ABSENT };

typedef struct verdict {
  int kind;
  double error; /* CELL_CLOSE / CELL_DIFF: the largest (relative or integer) difference */
  bool integer;
  char detail[200];
} verdict;

static int64_t int_at(const run_output *o, size_t i) {
  switch (o->type) {
    case WICK_DTYPE_INT8: return ((const int8_t *)o->data)[i];
    case WICK_DTYPE_UINT8:
    case WICK_DTYPE_BOOL: return ((const uint8_t *)o->data)[i];
    case WICK_DTYPE_INT16: return ((const int16_t *)o->data)[i];
    case WICK_DTYPE_INT32: return ((const int32_t *)o->data)[i];
    case WICK_DTYPE_INT64: return ((const int64_t *)o->data)[i];
    default: return 0;
  }
}

static void compare(const run_result *got, const run_result *ref, double tol, verdict *v) {
  memset(v, 0, sizeof *v);
  v->kind = CELL_SAME;
  if (got->nout != ref->nout) {
    v->kind = CELL_DIFF;
    snprintf(v->detail, sizeof v->detail, "%zu outputs, the reference %zu", got->nout, ref->nout);
    return;
  }
  for (size_t o = 0; o < ref->nout; o++) {
    const run_output *a = &got->out[o], *b = &ref->out[o];
    bool shape_ok = a->type == b->type && a->rank == b->rank && a->bytes == b->bytes;
    for (size_t d = 0; shape_ok && d < a->rank; d++) shape_ok = a->dims[d] == b->dims[d];
    if (!shape_ok) {
      v->kind = CELL_DIFF;
      v->error = INFINITY;
      snprintf(v->detail, sizeof v->detail, "output %zu: type or shape differs", o);
      return;
    }
    if (memcmp(a->data, b->data, a->bytes) == 0) continue;
    if (a->type == WICK_DTYPE_FLOAT32 || a->type == WICK_DTYPE_COMPLEX64) { /* as floats */
      const float *x = (const float *)(const void *)a->data,
                  *y = (const float *)(const void *)b->data;
      size_t n = a->bytes / 4, worst = SIZE_MAX;
      double max_ref = 0, max_diff = 0;
      for (size_t i = 0; i < n; i++)
        if (isfinite(y[i]) && fabs(y[i]) > max_ref) max_ref = fabs(y[i]);
      for (size_t i = 0; i < n; i++) {
        if (memcmp(&x[i], &y[i], 4) == 0) continue;
        double d = fabs((double)x[i] - (double)y[i]); /* 0: +0 against -0 */
        if (isnan(x[i]) && isnan(y[i]))
          d = 0; /* NaN payloads */
        else if (isnan(d))
          d = INFINITY; /* NaN against a number, inf - inf */
        if (worst == SIZE_MAX || d > max_diff) max_diff = d, worst = i;
      }
      double rel = max_diff / (max_ref > 1 ? max_ref : 1);
      int kind = tol == 0 || rel > tol ? CELL_DIFF : CELL_CLOSE;
      if (kind > v->kind || (kind == v->kind && rel > v->error)) {
        v->kind = kind;
        v->error = rel;
        snprintf(v->detail, sizeof v->detail, "output %zu [%zu]: %.9g, the reference %.9g", o,
                 worst, x[worst], y[worst]);
      }
    } else {
      size_t n = a->bytes / type_size(a->type), worst = 0;
      int64_t max_diff = 0;
      bool integer = a->type == WICK_DTYPE_INT8 || a->type == WICK_DTYPE_UINT8 ||
                     a->type == WICK_DTYPE_INT16 || a->type == WICK_DTYPE_INT32 ||
                     a->type == WICK_DTYPE_INT64 || a->type == WICK_DTYPE_BOOL;
      for (size_t i = 0; integer && i < n; i++) {
        int64_t d = int_at(a, i) - int_at(b, i);
        if (d < 0) d = -d;
        if (d > max_diff) max_diff = d, worst = i;
      }
      v->kind = CELL_DIFF;
      v->integer = integer;
      if (integer) {
        if ((double)max_diff > v->error) v->error = (double)max_diff;
        snprintf(v->detail, sizeof v->detail, "output %zu [%zu]: %lld, the reference %lld", o,
                 worst, (long long)int_at(a, worst), (long long)int_at(b, worst));
      } else {
        v->error = INFINITY;
        snprintf(v->detail, sizeof v->detail, "output %zu: bytes differ", o);
      }
    }
  }
}

/* ---------------------------------------------------------------- the table */

#define MAX_COVERED 256
static const char *covered[MAX_COVERED];
static size_t num_covered;
static int num_cases, num_diff, num_err, num_cells, num_close, num_absent, num_weak;
static char *report; /* the DIFF / ERR details, printed after the table */
static size_t report_len, report_cap;

static void note(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = strlen(line);
  if (report_len + len + 1 > report_cap) {
    report_cap = (report_len + len + 1) * 2;
    report = realloc(report, report_cap);
    if (report == NULL) abort();
  }
  memcpy(report + report_len, line, len + 1);
  report_len += len;
}

static void print_header(void) {
  printf("%-28s %-56s", "op", "variant");
  for (int k = 1; k < num_sets; k++) printf(" %-11s", sets[k].name);
  printf("\n");
}

static void mark_covered(const char *op_name) {
  for (size_t i = 0; i < num_covered; i++)
    if (strcmp(covered[i], op_name) == 0) return;
  if (num_covered < MAX_COVERED) covered[num_covered++] = op_name;
}

/* Why the reference's outputs would make a weak check (all elements equal, or most of them at
 * the integer type's bounds: the case's scales are off), or NULL. */
static const char *degenerate(const run_result *r) {
  for (size_t o = 0; o < r->nout; o++) {
    const run_output *out = &r->out[o];
    const size_t size = type_size(out->type), n = size ? out->bytes / size : 0;
    if (n < 4 || out->type == WICK_DTYPE_BOOL) continue;
    bool constant = true;
    for (size_t i = 1; i < n && constant; i++)
      constant = memcmp(out->data, out->data + i * size, size) == 0;
    if (constant) return "every output element is the same";
    double lo, hi;
    if (out->type != WICK_DTYPE_INT8 && out->type != WICK_DTYPE_UINT8 &&
        out->type != WICK_DTYPE_INT16)
      continue;
    type_range(out->type, &lo, &hi);
    size_t at_bounds = 0;
    for (size_t i = 0; i < n; i++) {
      const int64_t v = int_at(out, i);
      at_bounds += v == (int64_t)lo || v == (int64_t)hi;
    }
    if (at_bounds * 2 > n) return "most output elements saturate";
  }
  return NULL;
}

/* Builds the model, runs it on every set, prints its row, frees the case. */
static void run_case(sweep_case *c) {
  if (c->skip) {
    free(c->prebuilt);
    tm_free(c->b);
    return;
  }
  mark_covered(c->op);
  num_cases++;
  size_t size = c->prebuilt_size;
  uint8_t *bytes = c->prebuilt;
  if (bytes == NULL) {
    int32_t gin[MAX_INPUTS];
    for (size_t i = 0; i < c->nin; i++) gin[i] = c->in[i].tensor;
    tm_node *sg =
        tm_subgraph(c->b, c->g.tensors, c->g.nt, gin, c->nin, c->out, c->nout, c->g.ops, c->g.nops);
    tm_node *model =
        tm_model(c->b, 3, c->g.opcodes, c->g.nopc, &sg, 1, c->g.buffers, c->g.nbuf, NULL, 0);
    bytes = tm_finish(c->b, model, "TFL3", &size);
  }
  void *in_data[MAX_INPUTS];
  for (size_t i = 0; i < c->nin; i++) {
    in_data[i] = tm_xalloc(c->in[i].count * type_size(c->in[i].type));
    fill_random(c, c->in[i].type, in_data[i], c->in[i].count, c->in[i].lo, c->in[i].hi);
  }
  run_result results[MAX_SETS];
  printf("%-28s %-56s", c->op, c->variant);
  run_set(bytes, size, c, in_data, &sets[0], &results[0]);
  if (!results[0].ok) {
    printf(" reference failed\n");
    note("%s %s: the reference kernels failed: %s\n", c->op, c->variant, results[0].error);
    num_err++;
  } else {
    const char *weak = c->constant_ok ? NULL : degenerate(&results[0]);
    if (weak != NULL) {
      note("%s %s: the case checks little: %s (the reference's output)\n", c->op, c->variant, weak);
      num_weak++;
    }
    for (int k = 1; k < num_sets; k++) {
      char cell[32];
      results[k].ok = false;
      results[k].nout = 0;
      if (!sets[k].available) {
        printf(" %-11s", "-");
        num_absent++;
        continue;
      }
      run_set(bytes, size, c, in_data, &sets[k], &results[k]);
      num_cells++;
      const run_result *base = &results[sets[k].baseline];
      if (!results[k].ok) {
        snprintf(cell, sizeof cell, "ERR");
        note("%s %s [%s]: %s\n", c->op, c->variant, sets[k].name, results[k].error);
        num_err++;
      } else if (!base->ok) {
        snprintf(cell, sizeof cell, "ERR");
        note("%s %s [%s]: its baseline %s failed\n", c->op, c->variant, sets[k].name,
             sets[sets[k].baseline].name);
        num_err++;
      } else {
        verdict v;
        compare(&results[k], base, sets[k].exact ? EXACT : c->tol, &v);
        if (v.kind == CELL_SAME) {
          snprintf(cell, sizeof cell, "ok");
        } else if (v.kind == CELL_CLOSE) {
          snprintf(cell, sizeof cell, "~%.0e", v.error);
          num_close++;
        } else {
          if (v.integer)
            snprintf(cell, sizeof cell, "DIFF %.0f", v.error);
          else
            snprintf(cell, sizeof cell, "DIFF %.0e", v.error);
          note("%s %s [%s against %s, %s]: %s\n", c->op, c->variant, sets[k].name,
               sets[sets[k].baseline].name,
               sets[k].exact || c->tol == 0 ? "bit for bit" : "tolerance 1e-5", v.detail);
          num_diff++;
        }
      }
      printf(" %-11s", cell);
    }
    printf("\n");
  }
  fflush(stdout);
  for (int k = 0; k < num_sets; k++) run_free(&results[k]);
  for (size_t i = 0; i < c->nin; i++) free(in_data[i]);
  free(bytes);
  tm_free(c->b);
}

/* ---------------------------------------------------------------- option tables */

enum { PAD_SAME = 0, PAD_VALID = 1 };
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };
static const char *const act_names[] = {"", " relu", " relu_n1_to_1", " relu6"};

static tm_node *opt_conv(sweep_case *c, int padding, int stride_h, int stride_w, int act,
                         int dilation_h, int dilation_w) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, CONV_PADDING, (int8_t)padding);
  tm_i32(o, CONV_STRIDE_W, stride_w);
  tm_i32(o, CONV_STRIDE_H, stride_h);
  tm_i8(o, CONV_ACTIVATION, (int8_t)act);
  tm_i32(o, CONV_DILATION_W, dilation_w);
  tm_i32(o, CONV_DILATION_H, dilation_h);
  return o;
}

static tm_node *opt_dwconv(sweep_case *c, int padding, int stride, int multiplier, int act,
                           int dilation) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, DWCONV_PADDING, (int8_t)padding);
  tm_i32(o, DWCONV_STRIDE_W, stride);
  tm_i32(o, DWCONV_STRIDE_H, stride);
  tm_i32(o, DWCONV_DEPTH_MULTIPLIER, multiplier);
  tm_i8(o, DWCONV_ACTIVATION, (int8_t)act);
  tm_i32(o, DWCONV_DILATION_W, dilation);
  tm_i32(o, DWCONV_DILATION_H, dilation);
  return o;
}

static tm_node *opt_pool(sweep_case *c, int padding, int stride, int size, int act) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, POOL_PADDING, (int8_t)padding);
  tm_i32(o, POOL_STRIDE_W, stride);
  tm_i32(o, POOL_STRIDE_H, stride);
  tm_i32(o, POOL_FILTER_W, size);
  tm_i32(o, POOL_FILTER_H, size);
  tm_i8(o, POOL_ACTIVATION, (int8_t)act);
  return o;
}

static tm_node *opt_fc(sweep_case *c, int act, bool keep_num_dims, bool asymmetric) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, FC_ACTIVATION, (int8_t)act);
  tm_u8(o, FC_KEEP_NUM_DIMS, keep_num_dims);
  tm_u8(o, FC_ASYMMETRIC_QUANTIZE, asymmetric);
  return o;
}

/* One scalar field 0 (a fused activation, an axis, keep_dims ...); a table for the union. */
static tm_node *opt_i8(sweep_case *c, int8_t v) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, 0, v);
  return o;
}
static tm_node *opt_f32(sweep_case *c, float v) {
  tm_node *o = tm_table(c->b);
  tm_f32(o, 0, v);
  return o;
}
static tm_node *opt_empty(sweep_case *c) { return tm_table(c->b); }

/* An output scale that keeps most of a K-term dot product of full-range operands in range:
 * q_in and q_w are the operands' largest magnitudes in steps, q_out the output's. */
static float dot_scale(int k, float s_in, double q_in, float s_w, double q_w, double q_out) {
  return (float)(sqrt((double)k) * q_in * s_in * q_w * s_w / (1.5 * q_out));
}

/* The quantization of a pass-through op's operands (pools, movement): one node per tensor
 * (tiny_model.h would write a node shared by two tensors behind the second). */
static tm_node *quant_for(sweep_case *c, wick_dtype type) {
  switch (type) {
    case WICK_DTYPE_INT8: return q(c, 0.05f, -3);
    case WICK_DTYPE_UINT8: return q(c, 0.05f, 125);
    case WICK_DTYPE_INT16: return q(c, 0.001f, 0);
    default: return NULL;
  }
}
static double lo_for(wick_dtype type) { return type == WICK_DTYPE_FLOAT32 ? -2 : FULL; }

static const wick_dtype movement_types[] = {WICK_DTYPE_FLOAT32, WICK_DTYPE_INT8, WICK_DTYPE_UINT8,
                                            WICK_DTYPE_INT16};

/* ---------------------------------------------------------------- elementwise binary */

typedef struct shape_pair {
  const char *name;
  int32_t a[4], b[4];
  size_t ra, rb;
} shape_pair;

static const shape_pair binary_shapes[] = {
    {"same [2,3,5,7]", {2, 3, 5, 7}, {2, 3, 5, 7}, 4, 4},
    {"row [2,5,37]+[37]", {2, 5, 37}, {37}, 3, 1},
    {"scalar [3,41]+[]", {3, 41}, {0}, 2, 0},
    {"scalar first [1]+[3,41]", {1}, {3, 41}, 1, 2},
    {"general [2,1,7]+[2,5,1]", {2, 1, 7}, {2, 5, 1}, 3, 3},
    {"inner [4,6,1]+[4,6,9]", {4, 6, 1}, {4, 6, 9}, 3, 3},
};
#define NUM_BINARY_SHAPES (sizeof binary_shapes / sizeof binary_shapes[0])

typedef struct binary_op {
  const char *name;
  int32_t code;
  uint8_t opt; /* OPT_NONE: no options table */
  bool exact;  /* the vectorized kernels are bit-identical to the reference */
  double b_lo, b_hi, a_lo, a_hi;
} binary_op;

static void binary_case(const binary_op *bo, const shape_pair *sp, int act, wick_dtype type) {
  sweep_case c;
  case_begin(&c, bo->name, bo->exact ? EXACT : TOL_FLOAT, "%s %s%s", wick_dtype_name(type),
             sp->name, act_names[act]);
  int32_t ins[2] = {input(&c, type, sp->a, sp->ra, NULL, bo->a_lo, bo->a_hi),
                    input(&c, type, sp->b, sp->rb, NULL, bo->b_lo, bo->b_hi)};
  output(&c, type == WICK_DTYPE_BOOL ? WICK_DTYPE_BOOL : type, NULL);
  op(&c, bo->code, ins, 2, bo->opt, bo->opt ? opt_i8(&c, (int8_t)act) : NULL);
  run_case(&c);
}

static void sweep_binary_float(void) {
  static const binary_op ops[] = {
      {"ADD", WICK_BUILTIN_ADD, OPT_ADD, true, -2, 2, -2, 2},
      {"SUB", WICK_BUILTIN_SUB, OPT_SUB, true, -2, 2, -2, 2},
      {"MUL", WICK_BUILTIN_MUL, OPT_MUL, true, -2, 2, -2, 2},
      {"DIV", WICK_BUILTIN_DIV, OPT_DIV, true, 0.25, 2, -2, 2},
      {"MAXIMUM", WICK_BUILTIN_MAXIMUM, OPT_NONE, true, -2, 2, -2, 2},
      {"MINIMUM", WICK_BUILTIN_MINIMUM, OPT_NONE, true, -2, 2, -2, 2},
      {"SQUARED_DIFFERENCE", WICK_BUILTIN_SQUARED_DIFFERENCE, OPT_NONE, true, -2, 2, -2, 2},
  };
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    for (size_t s = 0; s < NUM_BINARY_SHAPES; s++)
      binary_case(&ops[o], &binary_shapes[s], ACT_NONE, WICK_DTYPE_FLOAT32);
    if (ops[o].opt != OPT_NONE) {
      binary_case(&ops[o], &binary_shapes[0], ACT_RELU6, WICK_DTYPE_FLOAT32);
      binary_case(&ops[o], &binary_shapes[1], ACT_RELU, WICK_DTYPE_FLOAT32);
      binary_case(&ops[o], &binary_shapes[2], ACT_RELU_N1_TO_1, WICK_DTYPE_FLOAT32);
    }
  }
  /* large enough to be split over the threads */
  static const shape_pair large = {"large [4,256,300]", {4, 256, 300}, {4, 256, 300}, 3, 3};
  binary_case(&ops[0], &large, ACT_NONE, WICK_DTYPE_FLOAT32);
  binary_case(&ops[2], &large, ACT_RELU, WICK_DTYPE_FLOAT32);
}

typedef struct qparams {
  float scale;
  int64_t zero_point;
} qparams;

static void qbinary_case(const char *name, int32_t code, uint8_t opt, wick_dtype t,
                         const shape_pair *sp, int act, qparams a, qparams b, qparams out,
                         const char *note) {
  sweep_case c;
  case_begin(&c, name, EXACT, "%s %s%s%s", wick_dtype_name(t), sp->name, act_names[act], note);
  int32_t ins[2] = {input(&c, t, sp->a, sp->ra, q(&c, a.scale, a.zero_point), FULL, 0),
                    input(&c, t, sp->b, sp->rb, q(&c, b.scale, b.zero_point), FULL, 0)};
  output(&c, t, q(&c, out.scale, out.zero_point));
  op(&c, code, ins, 2, opt, opt ? opt_i8(&c, (int8_t)act) : NULL);
  run_case(&c);
}

static void sweep_binary_quantized(void) {
  static const struct {
    const char *name;
    int32_t code;
    uint8_t opt;
  } arith[] = {{"ADD", WICK_BUILTIN_ADD, OPT_ADD},
               {"SUB", WICK_BUILTIN_SUB, OPT_SUB},
               {"MUL", WICK_BUILTIN_MUL, OPT_MUL}};
  for (size_t o = 0; o < 3; o++) {
    const bool mul = arith[o].code == WICK_BUILTIN_MUL;
    const qparams a8 = {0.05f, 3}, b8 = {0.03f, -7}, o8 = {mul ? 0.2f : 0.08f, -2};
    const qparams au = {0.05f, 128}, bu = {0.03f, 120}, ou = {mul ? 0.2f : 0.08f, 130};
    const qparams a16 = {0.0004f, 0}, b16 = {0.0003f, 0}, o16 = {mul ? 0.004f : 0.0008f, 0};
    for (size_t s = 0; s < NUM_BINARY_SHAPES; s++) {
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT8, &binary_shapes[s],
                   ACT_NONE, a8, b8, o8, "");
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_UINT8, &binary_shapes[s],
                   ACT_NONE, au, bu, ou, "");
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT16, &binary_shapes[s],
                   ACT_NONE, a16, b16, o16, "");
    }
    qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT8, &binary_shapes[0],
                 ACT_RELU6, a8, b8, o8, "");
    qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT8, &binary_shapes[1],
                 ACT_RELU, a8, b8, o8, "");
    qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_UINT8, &binary_shapes[2],
                 ACT_RELU6, au, bu, ou, "");
    if (!mul) { /* power-of-two int16 scales: LiteRT's LSTM path */
      const qparams p1 = {1.0f / 2048, 0}, p2 = {1.0f / 4096, 0};
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT16, &binary_shapes[0],
                   ACT_NONE, p1, p2, p1, " pot scales");
    }
  }
  static const shape_pair large = {"large [4,256,300]", {4, 256, 300}, {4, 256, 300}, 3, 3};
  qbinary_case("ADD", WICK_BUILTIN_ADD, OPT_ADD, WICK_DTYPE_INT8, &large, ACT_NONE,
               (qparams){0.05f, 3}, (qparams){0.03f, -7}, (qparams){0.08f, -2}, "");
  qbinary_case("MUL", WICK_BUILTIN_MUL, OPT_MUL, WICK_DTYPE_INT8, &large, ACT_NONE,
               (qparams){0.05f, 3}, (qparams){0.03f, -7}, (qparams){0.2f, -2}, "");
  /* MAXIMUM / MINIMUM compare the raw values: operands quantized like the output */
  static const struct {
    const char *name;
    int32_t code;
  } minmax[] = {{"MAXIMUM", WICK_BUILTIN_MAXIMUM}, {"MINIMUM", WICK_BUILTIN_MINIMUM}};
  for (size_t o = 0; o < 2; o++)
    for (size_t s = 0; s < NUM_BINARY_SHAPES; s += 1) {
      const qparams p = {0.05f, 3};
      qbinary_case(minmax[o].name, minmax[o].code, OPT_NONE, WICK_DTYPE_INT8, &binary_shapes[s],
                   ACT_NONE, p, p, p, "");
      if (s < 2)
        qbinary_case(minmax[o].name, minmax[o].code, OPT_NONE, WICK_DTYPE_INT16, &binary_shapes[s],
                     ACT_NONE, (qparams){0.001f, 0}, (qparams){0.001f, 0}, (qparams){0.001f, 0},
                     "");
    }
  for (size_t s = 0; s < NUM_BINARY_SHAPES; s++)
    qbinary_case("SQUARED_DIFFERENCE", WICK_BUILTIN_SQUARED_DIFFERENCE, OPT_NONE, WICK_DTYPE_INT8,
                 &binary_shapes[s], ACT_NONE, (qparams){0.05f, 3}, (qparams){0.04f, -7},
                 (qparams){0.65f, -128}, "");
}

/* ---------------------------------------------------------------- elementwise unary */

typedef struct unary_op {
  const char *name;
  int32_t code;
  bool exact;
  double lo, hi;
} unary_op;

static void unary_case(const unary_op *u, wick_dtype t, const int32_t *shape, size_t rank,
                       const char *shape_name) {
  sweep_case c;
  case_begin(&c, u->name, u->exact ? EXACT : TOL_FLOAT, "%s %s", wick_dtype_name(t), shape_name);
  int32_t in = input(&c, t, shape, rank, NULL, u->lo, u->hi);
  output(&c, t, NULL);
  op(&c, u->code, &in, 1, OPT_NONE, NULL);
  run_case(&c);
}

static void sweep_unary(void) {
  static const unary_op ops[] = {
      {"RELU", WICK_BUILTIN_RELU, true, -8, 8},
      {"RELU6", WICK_BUILTIN_RELU6, true, -8, 8},
      {"RELU_N1_TO_1", WICK_BUILTIN_RELU_N1_TO_1, true, -3, 3},
      {"RELU_0_TO_1", WICK_BUILTIN_RELU_0_TO_1, true, -3, 3},
      {"HARD_SWISH", WICK_BUILTIN_HARD_SWISH, true, -8, 8},
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, false, -20, 20},
      {"TANH", WICK_BUILTIN_TANH, false, -6, 6},
      {"EXP", WICK_BUILTIN_EXP, false, -20, 20},
      {"ELU", WICK_BUILTIN_ELU, false, -6, 6},
      {"LOG", WICK_BUILTIN_LOG, false, 0.01, 10},
      {"SQRT", WICK_BUILTIN_SQRT, false, 0, 10},
      {"RSQRT", WICK_BUILTIN_RSQRT, false, 0.01, 10},
      {"SQUARE", WICK_BUILTIN_SQUARE, false, -4, 4},
      {"ABS", WICK_BUILTIN_ABS, true, -4, 4},
      {"NEG", WICK_BUILTIN_NEG, true, -4, 4},
      {"SIN", WICK_BUILTIN_SIN, false, -7, 7},
      {"COS", WICK_BUILTIN_COS, false, -7, 7},
      {"FLOOR", WICK_BUILTIN_FLOOR, true, -9, 9},
      {"CEIL", WICK_BUILTIN_CEIL, true, -9, 9},
      {"ROUND", WICK_BUILTIN_ROUND, true, -9, 9},
      {"SIGN", WICK_BUILTIN_SIGN, true, -3, 3},
  };
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    unary_case(&ops[o], WICK_DTYPE_FLOAT32, S(3, 37), "[3,37]");
    if (o < 8) unary_case(&ops[o], WICK_DTYPE_FLOAT32, S(1, 5), "[1,5]");
  }
  unary_case(&ops[0], WICK_DTYPE_FLOAT32, S(2, 400, 400), "large [2,400,400]");
  unary_case(&ops[5], WICK_DTYPE_FLOAT32, S(2, 400, 400), "large [2,400,400]");
  static const unary_op int_ops[] = {{"ABS", WICK_BUILTIN_ABS, true, -1000, 1000},
                                     {"NEG", WICK_BUILTIN_NEG, true, -1000, 1000}};
  for (size_t o = 0; o < sizeof int_ops / sizeof int_ops[0]; o++)
    unary_case(&int_ops[o], WICK_DTYPE_INT32, S(3, 37), "[3,37]");
  /* activations with options */
  for (int approximate = 0; approximate < 2; approximate++) {
    sweep_case c;
    case_begin(&c, "GELU", TOL_FLOAT, "float32 [3,37]%s", approximate ? " approximate" : "");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -6, 6);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_GELU, &in, 1, OPT_GELU, opt_i8(&c, (int8_t)approximate));
    run_case(&c);
  }
  {
    sweep_case c;
    case_begin(&c, "LEAKY_RELU", EXACT, "float32 [3,37] alpha 0.2");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -6, 6);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_LEAKY_RELU, &in, 1, OPT_LEAKY_RELU, opt_f32(&c, 0.2f));
    run_case(&c);
  }
}

/* Quantized activations: input (type, params), output params. */
typedef struct qunary {
  const char *name;
  int32_t code;
  wick_dtype type;
  qparams in, out;
  double lo, hi; /* input range in steps (FULL: the type's) */
} qunary;

static void sweep_unary_quantized(void) {
  const float s15 = 1.0f / 32768;
  const qunary ops[] = {
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, WICK_DTYPE_INT8, {0.06f, 5}, {1.0f / 256, -128}, FULL, 0},
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, WICK_DTYPE_UINT8, {0.06f, 128}, {1.0f / 256, 0}, FULL, 0},
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, WICK_DTYPE_INT16, {1.0f / 4096, 0}, {s15, 0}, FULL, 0},
      {"TANH", WICK_BUILTIN_TANH, WICK_DTYPE_INT8, {0.03f, -4}, {1.0f / 128, 0}, FULL, 0},
      {"TANH", WICK_BUILTIN_TANH, WICK_DTYPE_UINT8, {0.03f, 128}, {1.0f / 128, 128}, FULL, 0},
      {"TANH", WICK_BUILTIN_TANH, WICK_DTYPE_INT16, {1.0f / 8192, 0}, {s15, 0}, FULL, 0},
      {"HARD_SWISH", WICK_BUILTIN_HARD_SWISH, WICK_DTYPE_INT8, {0.05f, 3}, {0.03f, -90}, FULL, 0},
      {"HARD_SWISH", WICK_BUILTIN_HARD_SWISH, WICK_DTYPE_UINT8, {0.05f, 128}, {0.03f, 40}, FULL, 0},
      {"RELU", WICK_BUILTIN_RELU, WICK_DTYPE_INT8, {0.05f, 4}, {0.03f, -100}, FULL, 0},
      {"RELU", WICK_BUILTIN_RELU, WICK_DTYPE_UINT8, {0.05f, 128}, {0.03f, 20}, FULL, 0},
      {"RELU", WICK_BUILTIN_RELU, WICK_DTYPE_INT16, {0.001f, 0}, {0.0008f, 0}, FULL, 0},
      {"RELU6", WICK_BUILTIN_RELU6, WICK_DTYPE_INT8, {0.06f, -2}, {0.03f, -110}, FULL, 0},
      {"RELU6", WICK_BUILTIN_RELU6, WICK_DTYPE_UINT8, {0.06f, 120}, {0.03f, 30}, FULL, 0},
      {"RELU6", WICK_BUILTIN_RELU6, WICK_DTYPE_INT16, {0.0003f, 0}, {0.0002f, 0}, FULL, 0},
      {"RELU_N1_TO_1",
       WICK_BUILTIN_RELU_N1_TO_1,
       WICK_DTYPE_INT8,
       {0.02f, 1},
       {1.0f / 127, 0},
       FULL,
       0},
      {"RELU_0_TO_1",
       WICK_BUILTIN_RELU_0_TO_1,
       WICK_DTYPE_INT8,
       {0.02f, 1},
       {1.0f / 200, -100},
       FULL,
       0},
      {"RSQRT", WICK_BUILTIN_RSQRT, WICK_DTYPE_INT8, {0.05f, -100}, {0.02f, -128}, -99, 127},
      {"RSQRT", WICK_BUILTIN_RSQRT, WICK_DTYPE_INT16, {0.001f, 0}, {0.001f, 0}, 1, 32767},
  };
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    const qunary *u = &ops[o];
    sweep_case c;
    case_begin(&c, u->name, EXACT, "%s [3,37]", wick_dtype_name(u->type));
    int32_t in = input(&c, u->type, S(3, 37), q(&c, u->in.scale, u->in.zero_point), u->lo, u->hi);
    output(&c, u->type, q(&c, u->out.scale, u->out.zero_point));
    op(&c, u->code, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
  /* a large int8 table op: the 8-bit lookup kernels */
  {
    sweep_case c;
    case_begin(&c, "LOGISTIC", EXACT, "int8 large [2,400,400]");
    int32_t in = input(&c, WICK_DTYPE_INT8, S(2, 400, 400), q(&c, 0.06f, 5), FULL, 0);
    output(&c, WICK_DTYPE_INT8, q(&c, 1.0f / 256, -128));
    op(&c, WICK_BUILTIN_LOGISTIC, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    const int64_t z = t ? 128 : 0;
    for (int approximate = 0; approximate < 2; approximate++) {
      sweep_case c;
      case_begin(&c, "GELU", EXACT, "%s [3,37]%s", wick_dtype_name(type),
                 approximate ? " approximate" : "");
      int32_t in = input(&c, type, S(3, 37), q(&c, 0.04f, z + 2), FULL, 0);
      output(&c, type, q(&c, 0.03f, z - 40));
      op(&c, WICK_BUILTIN_GELU, &in, 1, OPT_GELU, opt_i8(&c, (int8_t)approximate));
      run_case(&c);
    }
    sweep_case c;
    case_begin(&c, "LEAKY_RELU", EXACT, "%s [3,37] alpha 0.2", wick_dtype_name(type));
    int32_t in = input(&c, type, S(3, 37), q(&c, 0.04f, z + 2), FULL, 0);
    output(&c, type, q(&c, 0.03f, z - 20));
    op(&c, WICK_BUILTIN_LEAKY_RELU, &in, 1, OPT_LEAKY_RELU, opt_f32(&c, 0.2f));
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- PRELU */

static void sweep_prelu(void) {
  static const struct {
    const char *name;
    int32_t alpha[3];
    size_t rank;
  } alphas[] = {{"alpha [9]", {9}, 1},
                {"alpha [1,1,9]", {1, 1, 9}, 3},
                {"alpha [5,7,9]", {5, 7, 9}, 3}};
  for (size_t a = 0; a < 3; a++) {
    sweep_case c;
    case_begin(&c, "PRELU", EXACT, "float32 [2,5,7,9] %s", alphas[a].name);
    int32_t ins[2];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 5, 7, 9), NULL, -3, 3);
    ins[1] =
        random_constant(&c, WICK_DTYPE_FLOAT32, alphas[a].alpha, alphas[a].rank, NULL, -0.5, 0.5);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_PRELU, ins, 2, OPT_NONE, NULL);
    run_case(&c);
  }
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    const int64_t z = t ? 128 : 0;
    sweep_case c;
    case_begin(&c, "PRELU", EXACT, "%s [2,5,7,9] alpha [9]", wick_dtype_name(type));
    int32_t ins[2];
    ins[0] = input(&c, type, S(2, 5, 7, 9), q(&c, 0.05f, z + 3), FULL, 0);
    ins[1] = random_constant(&c, type, S(9), q(&c, 0.004f, z - 10), FULL, 0);
    output(&c, type, q(&c, 0.04f, z - 30));
    op(&c, WICK_BUILTIN_PRELU, ins, 2, OPT_NONE, NULL);
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- convolutions */

typedef struct conv_spec {
  const char *name;
  int32_t n, h, w, cin, cout, kh, kw, groups;
  int padding, sh, sw, dh, dw, act;
  bool bias;
} conv_spec;

static const conv_spec conv_specs[] = {
    {"1x1 [1,9,7,19]->37", 1, 9, 7, 19, 37, 1, 1, 1, PAD_VALID, 1, 1, 1, 1, ACT_NONE, true},
    {"1x1 [2,5,5,64]->16 relu", 2, 5, 5, 64, 16, 1, 1, 1, PAD_VALID, 1, 1, 1, 1, ACT_RELU, true},
    {"3x3 same [1,28,26,16]->24 (winograd)", 1, 28, 26, 16, 24, 3, 3, 1, PAD_SAME, 1, 1, 1, 1,
     ACT_NONE, true},
    {"3x3 same [1,6,7,5]->13", 1, 6, 7, 5, 13, 3, 3, 1, PAD_SAME, 1, 1, 1, 1, ACT_RELU6, true},
    {"3x3 stride 2 same [2,11,9,5]->13", 2, 11, 9, 5, 13, 3, 3, 1, PAD_SAME, 2, 2, 1, 1, ACT_RELU,
     true},
    {"5x3 stride 1x2 valid [1,12,13,7]->9", 1, 12, 13, 7, 9, 5, 3, 1, PAD_VALID, 1, 2, 1, 1,
     ACT_NONE, true},
    {"3x3 dilation 2 same [1,12,12,8]->16", 1, 12, 12, 8, 16, 3, 3, 1, PAD_SAME, 1, 1, 2, 2,
     ACT_NONE, true},
    {"3x3 groups 3 same [1,8,8,12]->18", 1, 8, 8, 12, 18, 3, 3, 3, PAD_SAME, 1, 1, 1, 1, ACT_NONE,
     true},
    {"3x3 groups=channels [1,8,8,12]->12", 1, 8, 8, 12, 12, 3, 3, 12, PAD_SAME, 1, 1, 1, 1,
     ACT_NONE, true},
    {"3x3 no bias [1,7,7,8]->8 relu_n1_to_1", 1, 7, 7, 8, 8, 3, 3, 1, PAD_SAME, 1, 1, 1, 1,
     ACT_RELU_N1_TO_1, false},
    {"large 3x3 same [1,32,32,32]->32", 1, 32, 32, 32, 32, 3, 3, 1, PAD_SAME, 1, 1, 1, 1, ACT_NONE,
     true},
};
#define NUM_CONV_SPECS (sizeof conv_specs / sizeof conv_specs[0])

/* The activation/filter/bias schemes of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and
 * TRANSPOSE_CONV. */
typedef enum scheme {
  SCHEME_FLOAT,
  SCHEME_INT8,          /* int8 activations, per-channel int8 weights, int32 bias */
  SCHEME_INT8_TENSOR,   /* int8 activations, one int8 weight scale */
  SCHEME_UINT8,         /* uint8 activations and weights (zero point 120), int32 bias */
  SCHEME_INT16,         /* int16 activations (zero points 0), int8 weights, int64 bias */
  SCHEME_INT16_B32,     /* the same with an int32 bias */
  SCHEME_HYBRID,        /* float activations, per-channel int8 weights */
  SCHEME_HYBRID_ASYM,   /* the same, inputs quantized asymmetrically (FULLY_CONNECTED) */
  SCHEME_HYBRID_TENSOR, /* float activations, one int8 weight scale */
  SCHEME_COUNT
} scheme;
static const char *const scheme_names[] = {"float32",          "int8",
                                           "int8 per-tensor",  "uint8",
                                           "int16x8",          "int16x8 bias32",
                                           "hybrid",           "hybrid asymmetric",
                                           "hybrid per-tensor"};

typedef struct scheme_types {
  wick_dtype act, weight, bias;
  double q_act, q_w, q_out; /* magnitudes in steps */
  int64_t zp_in, zp_out, zp_w;
  float s_in, s_w;
  bool per_channel, quantized;
} scheme_types;

static scheme_types scheme_of(scheme s) {
  scheme_types t = {WICK_DTYPE_FLOAT32,
                    WICK_DTYPE_FLOAT32,
                    WICK_DTYPE_FLOAT32,
                    2,
                    1,
                    1,
                    0,
                    0,
                    0,
                    1,
                    1,
                    false,
                    false};
  switch (s) {
    case SCHEME_FLOAT: break;
    case SCHEME_INT8:
    case SCHEME_INT8_TENSOR:
      t = (scheme_types){
          WICK_DTYPE_INT8, WICK_DTYPE_INT8, WICK_DTYPE_INT32, 128, 127, 128, -5, 3, 0,
          0.02f,           0.01f,           s == SCHEME_INT8, true};
      break;
    case SCHEME_UINT8:
      t = (scheme_types){WICK_DTYPE_UINT8,
                         WICK_DTYPE_UINT8,
                         WICK_DTYPE_INT32,
                         128,
                         128,
                         128,
                         128,
                         128,
                         120,
                         0.02f,
                         0.01f,
                         false,
                         true};
      break;
    case SCHEME_INT16:
    case SCHEME_INT16_B32:
      t = (scheme_types){WICK_DTYPE_INT16,
                         WICK_DTYPE_INT8,
                         s == SCHEME_INT16 ? WICK_DTYPE_INT64 : WICK_DTYPE_INT32,
                         32768,
                         127,
                         32768,
                         0,
                         0,
                         0,
                         0.0005f,
                         0.01f,
                         true,
                         true};
      break;
    case SCHEME_HYBRID:
    case SCHEME_HYBRID_ASYM:
    case SCHEME_HYBRID_TENSOR:
      t = (scheme_types){WICK_DTYPE_FLOAT32,
                         WICK_DTYPE_INT8,
                         WICK_DTYPE_FLOAT32,
                         2,
                         127,
                         1,
                         0,
                         0,
                         0,
                         1,
                         0.01f,
                         s != SCHEME_HYBRID_TENSOR,
                         false};
      break;
    default: break;
  }
  return t;
}

/* The activation input / output and the weights + bias of one scheme: `channels` output
 * channels along weight dimension `wdim`, `k` terms per output. */
static int32_t scheme_input(sweep_case *c, const scheme_types *t, const int32_t *shape,
                            size_t rank) {
  return t->quantized ? input(c, t->act, shape, rank, q(c, t->s_in, t->zp_in), FULL, 0)
                      : input(c, t->act, shape, rank, NULL, -2, 2);
}

static int32_t scheme_weights(sweep_case *c, const scheme_types *t, const int32_t *shape,
                              size_t rank, int32_t channels, int32_t wdim, float *scales) {
  if (t->weight == WICK_DTYPE_FLOAT32)
    return random_constant(c, WICK_DTYPE_FLOAT32, shape, rank, NULL, -1, 1);
  tm_node *quant;
  if (t->per_channel) {
    channel_scales(scales, (size_t)channels, t->s_w);
    quant = q_channels(c, scales, (size_t)channels, wdim);
  } else {
    for (int32_t i = 0; i < channels; i++) scales[i] = t->s_w;
    quant = q(c, t->s_w, t->zp_w);
  }
  return t->weight == WICK_DTYPE_UINT8
             ? random_constant(c, t->weight, shape, rank, quant, FULL, 0)
             : random_constant(c, t->weight, shape, rank, quant, -127, 127);
}

static int32_t scheme_bias(sweep_case *c, const scheme_types *t, int32_t channels,
                           const float *scales) {
  if (t->bias == WICK_DTYPE_FLOAT32)
    return random_constant(c, WICK_DTYPE_FLOAT32, &channels, 1, NULL, -1, 1);
  float bias_scales[256];
  for (int32_t i = 0; i < channels; i++) bias_scales[i] = t->s_in * scales[i];
  tm_node *quant =
      t->per_channel ? q_channels(c, bias_scales, (size_t)channels, 0) : q(c, bias_scales[0], 0);
  const double range = t->bias == WICK_DTYPE_INT64 ? 200000 : 3000;
  return random_constant(c, t->bias, &channels, 1, quant, -range, range);
}

static int32_t scheme_output(sweep_case *c, const scheme_types *t, int k) {
  if (!t->quantized) return output(c, WICK_DTYPE_FLOAT32, NULL);
  return output(c, t->act,
                q(c, dot_scale(k, t->s_in, t->q_act, t->s_w, t->q_w, t->q_out), t->zp_out));
}

static void conv_case(const conv_spec *sp, scheme sc) {
  const scheme_types t = scheme_of(sc);
  sweep_case c;
  case_begin(&c, "CONV_2D", EXACT, "%s %s", scheme_names[sc], sp->name);
  if (!t.quantized) c.tol = TOL_FLOAT;
  const int32_t cin_g = sp->cin / sp->groups;
  float scales[256];
  int32_t ins[3];
  ins[0] = scheme_input(&c, &t, (const int32_t[]){sp->n, sp->h, sp->w, sp->cin}, 4);
  ins[1] = scheme_weights(&c, &t, (const int32_t[]){sp->cout, sp->kh, sp->kw, cin_g}, 4, sp->cout,
                          0, scales);
  ins[2] = sp->bias ? scheme_bias(&c, &t, sp->cout, scales) : -1;
  scheme_output(&c, &t, sp->kh * sp->kw * cin_g);
  op(&c, WICK_BUILTIN_CONV_2D, ins, 3, OPT_CONV_2D,
     opt_conv(&c, sp->padding, sp->sh, sp->sw, sp->act, sp->dh, sp->dw));
  run_case(&c);
}

static void sweep_conv(void) {
  for (size_t i = 0; i < NUM_CONV_SPECS; i++) {
    const conv_spec *sp = &conv_specs[i];
    const bool large = strncmp(sp->name, "large", 5) == 0;
    for (int sc = 0; sc < SCHEME_COUNT; sc++) {
      if (sc == SCHEME_HYBRID_ASYM || sc == SCHEME_HYBRID_TENSOR) continue; /* FC-only forms */
      if (large && sc != SCHEME_FLOAT && sc != SCHEME_INT8) continue;
      if ((sc == SCHEME_INT8_TENSOR || sc == SCHEME_INT16_B32) && i % 3 != 0) continue;
      conv_case(sp, (scheme)sc);
    }
  }
}

typedef struct dwconv_spec {
  const char *name;
  int32_t n, h, w, cin, multiplier, k;
  int padding, stride, dilation, act;
} dwconv_spec;

static void dwconv_case(const dwconv_spec *sp, scheme sc) {
  const scheme_types t = scheme_of(sc);
  sweep_case c;
  case_begin(&c, "DEPTHWISE_CONV_2D", t.quantized ? EXACT : TOL_FLOAT, "%s %s", scheme_names[sc],
             sp->name);
  const int32_t cout = sp->cin * sp->multiplier;
  float scales[256];
  int32_t ins[3];
  ins[0] = scheme_input(&c, &t, (const int32_t[]){sp->n, sp->h, sp->w, sp->cin}, 4);
  ins[1] = scheme_weights(&c, &t, (const int32_t[]){1, sp->k, sp->k, cout}, 4, cout, 3, scales);
  ins[2] = scheme_bias(&c, &t, cout, scales);
  scheme_output(&c, &t, sp->k * sp->k);
  op(&c, WICK_BUILTIN_DEPTHWISE_CONV_2D, ins, 3, OPT_DEPTHWISE_CONV_2D,
     opt_dwconv(&c, sp->padding, sp->stride, sp->multiplier, sp->act, sp->dilation));
  run_case(&c);
}

static void sweep_dwconv(void) {
  static const dwconv_spec specs[] = {
      {"3x3 same [1,9,11,19]", 1, 9, 11, 19, 1, 3, PAD_SAME, 1, 1, ACT_NONE},
      {"3x3 stride 2 valid [2,10,9,24] relu6", 2, 10, 9, 24, 1, 3, PAD_VALID, 2, 1, ACT_RELU6},
      {"3x3 stride 2 same [1,9,9,35]", 1, 9, 9, 35, 1, 3, PAD_SAME, 2, 1, ACT_NONE},
      {"5x5 same [1,10,9,21]", 1, 10, 9, 21, 1, 5, PAD_SAME, 1, 1, ACT_RELU},
      {"5x5 stride 2 same [1,11,11,16]", 1, 11, 11, 16, 1, 5, PAD_SAME, 2, 1, ACT_NONE},
      {"3x3 multiplier 2 same [1,7,7,6]", 1, 7, 7, 6, 2, 3, PAD_SAME, 1, 1, ACT_NONE},
      {"5x5 multiplier 3 valid [1,9,8,5]", 1, 9, 8, 5, 3, 5, PAD_VALID, 1, 1, ACT_NONE},
      {"3x3 dilation 2 same [1,11,10,17]", 1, 11, 10, 17, 1, 3, PAD_SAME, 1, 2, ACT_NONE},
      {"7x7 same [1,9,9,20]", 1, 9, 9, 20, 1, 7, PAD_SAME, 1, 1, ACT_NONE},
      {"large 3x3 same [1,64,64,64]", 1, 64, 64, 64, 1, 3, PAD_SAME, 1, 1, ACT_NONE},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (int sc = 0; sc < SCHEME_COUNT; sc++) {
      if (sc == SCHEME_HYBRID_ASYM || sc == SCHEME_HYBRID_TENSOR) continue;
      if (i == 9 && sc != SCHEME_FLOAT && sc != SCHEME_INT8) continue;
      if ((sc == SCHEME_INT8_TENSOR || sc == SCHEME_INT16_B32) && i % 3 != 0) continue;
      dwconv_case(&specs[i], (scheme)sc);
    }
}

typedef struct fc_spec {
  const char *name;
  int32_t in[3];
  size_t rank;
  int32_t n;
  bool bias, keep_num_dims;
  int act;
} fc_spec;

static void fc_case(const fc_spec *sp, scheme sc) {
  const scheme_types t = scheme_of(sc);
  sweep_case c;
  case_begin(&c, "FULLY_CONNECTED", t.quantized ? EXACT : TOL_FLOAT, "%s %s", scheme_names[sc],
             sp->name);
  const int32_t k = sp->in[sp->rank - 1];
  float scales[256];
  int32_t ins[3];
  ins[0] = scheme_input(&c, &t, sp->in, sp->rank);
  ins[1] = scheme_weights(&c, &t, (const int32_t[]){sp->n, k}, 2, sp->n, 0, scales);
  ins[2] = sp->bias ? scheme_bias(&c, &t, sp->n, scales) : -1;
  scheme_output(&c, &t, k);
  op(&c, WICK_BUILTIN_FULLY_CONNECTED, ins, 3, OPT_FULLY_CONNECTED,
     opt_fc(&c, sp->act, sp->keep_num_dims, sc == SCHEME_HYBRID_ASYM));
  run_case(&c);
}

static void sweep_fc(void) {
  static const fc_spec specs[] = {
      {"[1,67]x[37,67]", {1, 67}, 2, 37, true, false, ACT_NONE},
      {"[13,19]x[37,19] relu", {13, 19}, 2, 37, true, false, ACT_RELU},
      {"[2,3,45]x[33,45] keep_num_dims", {2, 3, 45}, 3, 33, true, true, ACT_NONE},
      {"[9,45]x[16,45] no bias", {9, 45}, 2, 16, false, false, ACT_NONE},
      {"[4,200]x[7,200] relu6", {4, 200}, 2, 7, true, false, ACT_RELU6},
      {"large [64,256]x[128,256]", {64, 256}, 2, 128, true, false, ACT_NONE},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (int sc = 0; sc < SCHEME_COUNT; sc++) fc_case(&specs[i], (scheme)sc);
  /* int8 weights with a nonzero zero point (legacy per-tensor form): the reference path */
  sweep_case c;
  case_begin(&c, "FULLY_CONNECTED", EXACT, "int8 weight zero point 4 [5,31]x[9,31]");
  int32_t ins[3];
  ins[0] = input(&c, WICK_DTYPE_INT8, S(5, 31), q(&c, 0.02f, -5), FULL, 0);
  ins[1] = random_constant(&c, WICK_DTYPE_INT8, S(9, 31), q(&c, 0.01f, 4), -127, 127);
  ins[2] = random_constant(&c, WICK_DTYPE_INT32, S(9), q(&c, 0.0002f, 0), -3000, 3000);
  output(&c, WICK_DTYPE_INT8, q(&c, dot_scale(31, 0.02f, 128, 0.01f, 127, 128), 3));
  op(&c, WICK_BUILTIN_FULLY_CONNECTED, ins, 3, OPT_FULLY_CONNECTED, opt_fc(&c, 0, false, false));
  run_case(&c);
}

/* ---------------------------------------------------------------- BATCH_MATMUL */

typedef struct bmm_spec {
  const char *name;
  int32_t a[4], b[4];
  size_t ra, rb;
  bool adj_x, adj_y, b_const;
} bmm_spec;

static tm_node *opt_bmm(sweep_case *c, bool adj_x, bool adj_y, bool asymmetric) {
  tm_node *o = tm_table(c->b);
  tm_u8(o, 0, adj_x);
  tm_u8(o, 1, adj_y);
  tm_u8(o, 2, asymmetric);
  return o;
}

static void sweep_bmm(void) {
  static const bmm_spec specs[] = {
      {"[2,9,19]x[2,19,37]", {2, 9, 19}, {2, 19, 37}, 3, 3, false, false, false},
      {"[3,1,5,8]x[1,2,8,17] broadcast", {3, 1, 5, 8}, {1, 2, 8, 17}, 4, 4, false, false, false},
      {"[2,7,13]x[2,21,13] adj_y", {2, 7, 13}, {2, 21, 13}, 3, 3, false, true, false},
      {"[2,13,7]x[2,13,21] adj_x", {2, 13, 7}, {2, 13, 21}, 3, 3, true, false, false},
      {"[2,9,19]x[19,37] constant rhs", {2, 9, 19}, {19, 37}, 3, 2, false, false, true},
      {"[1,1,33]x[33,40] constant rhs", {1, 1, 33}, {33, 40}, 3, 2, false, false, true},
      {"large [4,64,64]x[4,64,64]", {4, 64, 64}, {4, 64, 64}, 3, 3, false, false, false},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    const bmm_spec *sp = &specs[i];
    {
      sweep_case c;
      case_begin(&c, "BATCH_MATMUL", TOL_FLOAT, "float32 %s", sp->name);
      int32_t ins[2];
      ins[0] = input(&c, WICK_DTYPE_FLOAT32, sp->a, sp->ra, NULL, -2, 2);
      ins[1] = sp->b_const ? random_constant(&c, WICK_DTYPE_FLOAT32, sp->b, sp->rb, NULL, -1, 1)
                           : input(&c, WICK_DTYPE_FLOAT32, sp->b, sp->rb, NULL, -1, 1);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, WICK_BUILTIN_BATCH_MATMUL, ins, 2, OPT_BATCH_MATMUL,
         opt_bmm(&c, sp->adj_x, sp->adj_y, false));
      run_case(&c);
    }
    const int32_t k = sp->adj_x ? sp->a[sp->ra - 2] : sp->a[sp->ra - 1];
    const int32_t n = sp->adj_y ? sp->b[sp->rb - 2] : sp->b[sp->rb - 1];
    if (sp->b_const) /* hybrid: a constant int8 rhs, one scale or one per column */
      for (int form = 0; form < 3; form++) {
        sweep_case c;
        case_begin(&c, "BATCH_MATMUL", TOL_FLOAT, "hybrid%s %s",
                   form == 0   ? ""
                   : form == 1 ? " per-column"
                               : " asymmetric",
                   sp->name);
        float scales[256];
        channel_scales(scales, (size_t)n, 0.01f);
        int32_t ins[2];
        ins[0] = input(&c, WICK_DTYPE_FLOAT32, sp->a, sp->ra, NULL, -2, 2);
        ins[1] = random_constant(&c, WICK_DTYPE_INT8, sp->b, sp->rb,
                                 form == 1 ? q_channels(&c, scales, (size_t)n, (int32_t)sp->rb - 1)
                                           : q(&c, 0.01f, 0),
                                 -127, 127);
        output(&c, WICK_DTYPE_FLOAT32, NULL);
        op(&c, WICK_BUILTIN_BATCH_MATMUL, ins, 2, OPT_BATCH_MATMUL,
           opt_bmm(&c, sp->adj_x, sp->adj_y, form == 2));
        run_case(&c);
      }
    if (i < 4) /* integer: int8 x int8 and int16 x int8 */
      for (int t = 0; t < 2; t++) {
        const wick_dtype type = t ? WICK_DTYPE_INT16 : WICK_DTYPE_INT8;
        const float s_a = t ? 0.0005f : 0.02f;
        const double q_a = t ? 32768 : 128;
        sweep_case c;
        case_begin(&c, "BATCH_MATMUL", EXACT, "%s %s", wick_dtype_name(type), sp->name);
        int32_t ins[2];
        ins[0] = input(&c, type, sp->a, sp->ra, q(&c, s_a, t ? 0 : 3), FULL, 0);
        ins[1] = input(&c, WICK_DTYPE_INT8, sp->b, sp->rb, q(&c, 0.01f, 0), -127, 127);
        output(&c, type, q(&c, dot_scale(k, s_a, q_a, 0.01f, 127, q_a), t ? 0 : -4));
        op(&c, WICK_BUILTIN_BATCH_MATMUL, ins, 2, OPT_BATCH_MATMUL,
           opt_bmm(&c, sp->adj_x, sp->adj_y, false));
        run_case(&c);
      }
  }
}

/* ---------------------------------------------------------------- TRANSPOSE_CONV */

static void sweep_transpose_conv(void) {
  static const struct {
    const char *name;
    int32_t n, h, w, cin, cout, k, stride;
    int padding;
    bool bias;
  } specs[] = {
      {"3x3 stride 2 same [1,5,5,5]->8", 1, 5, 5, 5, 8, 3, 2, PAD_SAME, true},
      {"3x3 stride 2 valid [2,4,6,7]->9", 2, 4, 6, 7, 9, 3, 2, PAD_VALID, true},
      {"3x3 stride 1 same [1,6,5,8]->17 no bias", 1, 6, 5, 8, 17, 3, 1, PAD_SAME, false},
      {"2x2 stride 2 valid [1,7,7,16]->19", 1, 7, 7, 16, 19, 2, 2, PAD_VALID, true},
      {"4x4 stride 2 same [1,6,6,12]->10", 1, 6, 6, 12, 10, 4, 2, PAD_SAME, true},
  };
  const scheme schemes[] = {SCHEME_FLOAT, SCHEME_INT8, SCHEME_UINT8, SCHEME_INT16};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++) {
      const scheme_types t = scheme_of(schemes[s]);
      sweep_case c;
      case_begin(&c, "TRANSPOSE_CONV", t.quantized ? EXACT : TOL_FLOAT, "%s %s",
                 scheme_names[schemes[s]], specs[i].name);
      const int32_t oh = specs[i].padding == PAD_SAME
                             ? specs[i].h * specs[i].stride
                             : (specs[i].h - 1) * specs[i].stride + specs[i].k;
      const int32_t ow = specs[i].padding == PAD_SAME
                             ? specs[i].w * specs[i].stride
                             : (specs[i].w - 1) * specs[i].stride + specs[i].k;
      const int32_t out_shape[4] = {specs[i].n, oh, ow, specs[i].cout};
      float scales[256];
      int32_t ins[4];
      ins[0] = const_i32(&c, S(4), out_shape);
      ins[1] =
          scheme_weights(&c, &t,
                         (const int32_t[]){specs[i].cout, specs[i].k, specs[i].k, specs[i].cin}, 4,
                         specs[i].cout, 0, scales);
      ins[2] = scheme_input(&c, &t,
                            (const int32_t[]){specs[i].n, specs[i].h, specs[i].w, specs[i].cin}, 4);
      ins[3] = specs[i].bias ? scheme_bias(&c, &t, specs[i].cout, scales) : -1;
      scheme_output(&c, &t,
                    specs[i].k * specs[i].k * specs[i].cin / (specs[i].stride * specs[i].stride));
      tm_node *o = tm_table(c.b);
      tm_i8(o, TCONV_PADDING, (int8_t)specs[i].padding);
      tm_i32(o, TCONV_STRIDE_W, specs[i].stride);
      tm_i32(o, TCONV_STRIDE_H, specs[i].stride);
      op(&c, WICK_BUILTIN_TRANSPOSE_CONV, ins, specs[i].bias ? 4 : 3, OPT_TRANSPOSE_CONV, o);
      run_case(&c);
    }
}

/* ---------------------------------------------------------------- pools */

static void sweep_pools(void) {
  static const struct {
    const char *name;
    int32_t n, h, w, c, filter, stride;
    int padding, act;
  } specs[] = {
      {"2x2 stride 2 valid [1,8,10,19]", 1, 8, 10, 19, 2, 2, PAD_VALID, ACT_NONE},
      {"3x3 stride 2 same [2,9,11,24]", 2, 9, 11, 24, 3, 2, PAD_SAME, ACT_NONE},
      {"3x3 stride 1 same [1,7,6,37] relu6", 1, 7, 6, 37, 3, 1, PAD_SAME, ACT_RELU6},
      {"7x7 global [1,7,7,40]", 1, 7, 7, 40, 7, 1, PAD_VALID, ACT_NONE},
      {"large 3x3 stride 1 same [1,64,64,64]", 1, 64, 64, 64, 3, 1, PAD_SAME, ACT_NONE},
  };
  static const struct {
    const char *name;
    int32_t code;
  } pools[] = {{"MAX_POOL_2D", WICK_BUILTIN_MAX_POOL_2D},
               {"AVERAGE_POOL_2D", WICK_BUILTIN_AVERAGE_POOL_2D}};
  const wick_dtype types[] = {WICK_DTYPE_FLOAT32, WICK_DTYPE_INT8, WICK_DTYPE_UINT8,
                              WICK_DTYPE_INT16};
  for (size_t p = 0; p < 2; p++)
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
      for (size_t t = 0; t < 4; t++) {
        if (i == 4 && t > 1) continue;
        const wick_dtype type = types[t];
        sweep_case c;
        case_begin(&c, pools[p].name, EXACT, "%s %s", wick_dtype_name(type), specs[i].name);
        int32_t in =
            input(&c, type, (const int32_t[]){specs[i].n, specs[i].h, specs[i].w, specs[i].c}, 4,
                  quant_for(&c, type), type == WICK_DTYPE_FLOAT32 ? -3 : FULL, 3);
        output(&c, type, quant_for(&c, type));
        op(&c, pools[p].code, &in, 1, OPT_POOL_2D,
           opt_pool(&c, specs[i].padding, specs[i].stride, specs[i].filter, specs[i].act));
        run_case(&c);
      }
}

/* ---------------------------------------------------------------- SOFTMAX */

static void sweep_softmax(void) {
  static const struct {
    const char *name;
    int32_t shape[3];
    size_t rank;
    float beta;
  } specs[] = {{"[3,37] beta 1", {3, 37}, 2, 1.0f},
               {"[2,1000] beta 0.5", {2, 1000}, 2, 0.5f},
               {"[4,5,8] beta 1", {4, 5, 8}, 3, 1.0f},
               {"[7,3] beta 2", {7, 3}, 2, 2.0f}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    static const struct {
      wick_dtype type;
      qparams in, out;
    } schemes[] = {{WICK_DTYPE_FLOAT32, {0, 0}, {0, 0}},
                   {WICK_DTYPE_INT8, {0.02f, -3}, {1.0f / 256, -128}},
                   {WICK_DTYPE_UINT8, {0.02f, 130}, {1.0f / 256, 0}},
                   {WICK_DTYPE_INT16, {0.0005f, 0}, {1.0f / 32768, 0}}};
    for (size_t s = 0; s < 4; s++) {
      const wick_dtype type = schemes[s].type;
      const bool fl = type == WICK_DTYPE_FLOAT32;
      if (!fl && specs[i].shape[specs[i].rank - 1] > 100) continue; /* 8-bit steps: all ~0 */
      sweep_case c;
      case_begin(&c, "SOFTMAX", fl ? TOL_FLOAT : EXACT, "%s %s", wick_dtype_name(type),
                 specs[i].name);
      int32_t in = input(&c, type, specs[i].shape, specs[i].rank,
                         fl ? NULL : q(&c, schemes[s].in.scale, schemes[s].in.zero_point),
                         fl ? -8 : FULL, 8);
      output(&c, type, fl ? NULL : q(&c, schemes[s].out.scale, schemes[s].out.zero_point));
      op(&c, WICK_BUILTIN_SOFTMAX, &in, 1, OPT_SOFTMAX, opt_f32(&c, specs[i].beta));
      run_case(&c);
    }
    if (i < 2) {
      sweep_case c;
      case_begin(&c, "LOG_SOFTMAX", TOL_FLOAT, "float32 %s", specs[i].name);
      int32_t in = input(&c, WICK_DTYPE_FLOAT32, specs[i].shape, specs[i].rank, NULL, -8, 8);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, WICK_BUILTIN_LOG_SOFTMAX, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
  }
}

/* ---------------------------------------------------------------- reductions */

static void reduce_case(const char *name, int32_t code, wick_dtype type, const int32_t *shape,
                        size_t rank, const int32_t *axes, size_t naxes, bool keep_dims,
                        const char *shape_name, double tol) {
  sweep_case c;
  char axes_text[32] = "";
  for (size_t i = 0; i < naxes; i++)
    snprintf(axes_text + strlen(axes_text), sizeof axes_text - strlen(axes_text), "%s%d",
             i ? "," : "", axes[i]);
  case_begin(&c, name, tol, "%s %s axes [%s]%s", wick_dtype_name(type), shape_name, axes_text,
             keep_dims ? " keep_dims" : "");
  const bool quantized =
      type == WICK_DTYPE_INT8 || type == WICK_DTYPE_UINT8 || type == WICK_DTYPE_INT16;
  const bool raw = code == WICK_BUILTIN_REDUCE_MAX || code == WICK_BUILTIN_REDUCE_MIN;
  const int64_t zp = type == WICK_DTYPE_INT8 ? 3 : type == WICK_DTYPE_UINT8 ? 128 : 0;
  double lo = -2, hi = 2;
  if (code == WICK_BUILTIN_REDUCE_PROD) lo = 0.7, hi = 1.3;
  if (quantized) lo = FULL;
  int32_t ins[2];
  ins[0] = input(&c, type, shape, rank, quantized ? q(&c, 0.05f, zp) : NULL, lo, hi);
  ins[1] = const_i32(&c, (const int32_t[]){(int32_t)naxes}, 1, axes);
  const float out_scale = raw ? 0.05f : code == WICK_BUILTIN_SUM ? 0.5f : 0.04f;
  output(&c, type, quantized ? q(&c, out_scale, raw || !zp ? zp : zp - 1) : NULL);
  op(&c, code, ins, 2, OPT_REDUCER, opt_i8(&c, keep_dims));
  run_case(&c);
}

static void sweep_reduce(void) {
  static const struct {
    const char *name;
    int32_t code;
    bool exact; /* float: the optimized sum reassociates; max/min/prod do not */
  } ops[] = {{"MEAN", WICK_BUILTIN_MEAN, false},
             {"SUM", WICK_BUILTIN_SUM, false},
             {"REDUCE_MAX", WICK_BUILTIN_REDUCE_MAX, true},
             {"REDUCE_MIN", WICK_BUILTIN_REDUCE_MIN, true},
             {"REDUCE_PROD", WICK_BUILTIN_REDUCE_PROD, false}};
  static const struct {
    int32_t axes[3];
    size_t n;
    bool keep;
  } axes[] = {
      {{1, 2}, 2, true}, {{3}, 1, false}, {{0, 2}, 2, false}, {{-1, 1}, 2, true}, {{0}, 1, true}};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) {
      const int32_t shape[4] = {2, 5, 6, 19};
      reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_FLOAT32, shape, 4, axes[a].axes, axes[a].n,
                  axes[a].keep, "[2,5,6,19]", ops[o].exact ? EXACT : TOL_FLOAT);
      if (ops[o].code == WICK_BUILTIN_REDUCE_PROD) continue;
      reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_INT8, shape, 4, axes[a].axes, axes[a].n,
                  axes[a].keep, "[2,5,6,19]", EXACT);
      if (a < 2) {
        reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_UINT8, shape, 4, axes[a].axes, axes[a].n,
                    axes[a].keep, "[2,5,6,19]", EXACT);
        reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_INT16, shape, 4, axes[a].axes, axes[a].n,
                    axes[a].keep, "[2,5,6,19]", EXACT);
      }
    }
  const int32_t gap[2] = {1, 2}, last[1] = {-1};
  reduce_case("MEAN", WICK_BUILTIN_MEAN, WICK_DTYPE_FLOAT32, S(1, 7, 7, 1280), gap, 2, false,
              "global pool [1,7,7,1280]", TOL_FLOAT);
  reduce_case("MEAN", WICK_BUILTIN_MEAN, WICK_DTYPE_INT8, S(1, 7, 7, 1280), gap, 2, false,
              "global pool [1,7,7,1280]", EXACT);
  reduce_case("MEAN", WICK_BUILTIN_MEAN, WICK_DTYPE_FLOAT32, S(64, 384), last, 1, true, "[64,384]",
              TOL_FLOAT);
  reduce_case("SUM", WICK_BUILTIN_SUM, WICK_DTYPE_INT32, S(2, 5, 6, 19), gap, 2, false,
              "[2,5,6,19]", EXACT);
  static const struct {
    const char *name;
    int32_t code;
  } logical[] = {{"REDUCE_ANY", WICK_BUILTIN_REDUCE_ANY}, {"REDUCE_ALL", WICK_BUILTIN_REDUCE_ALL}};
  for (size_t o = 0; o < 2; o++)
    for (size_t a = 0; a < 3; a++)
      reduce_case(logical[o].name, logical[o].code, WICK_DTYPE_BOOL, S(2, 5, 6, 19), axes[a].axes,
                  axes[a].n, axes[a].keep, "[2,5,6,19]", EXACT);
}

/* ---------------------------------------------------------------- data movement */

static void sweep_pad(void) {
  const int32_t pads[8] = {0, 1, 2, 0, 1, 1, 0, 3};
  for (size_t t = 0; t < 4; t++) {
    const wick_dtype type = movement_types[t];
    for (int v2 = 0; v2 < 2; v2++) {
      sweep_case c;
      case_begin(&c, v2 ? "PADV2" : "PAD", EXACT, "%s [2,3,4,5] pads [[0,1],[2,0],[1,1],[0,3]]",
                 wick_dtype_name(type));
      int32_t ins[3];
      ins[0] = input(&c, type, S(2, 3, 4, 5), quant_for(&c, type), lo_for(type), 2);
      ins[1] = const_i32(&c, S(4, 2), pads);
      if (v2) ins[2] = random_constant(&c, type, NULL, 0, quant_for(&c, type), lo_for(type), 2);
      output(&c, type, quant_for(&c, type));
      op(&c, v2 ? WICK_BUILTIN_PADV2 : WICK_BUILTIN_PAD, ins, v2 ? 3u : 2u, OPT_PAD, opt_empty(&c));
      run_case(&c);
    }
  }
  for (int mode = 0; mode < 2; mode++) {
    sweep_case c;
    case_begin(&c, "MIRROR_PAD", EXACT, "float32 [1,5,6,3] %s", mode ? "symmetric" : "reflect");
    int32_t ins[2];
    const int32_t mp[8] = {0, 0, 2, 3, 1, 4, 0, 0};
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(1, 5, 6, 3), NULL, -2, 2);
    ins[1] = const_i32(&c, S(4, 2), mp);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_MIRROR_PAD, ins, 2, OPT_MIRROR_PAD, opt_i8(&c, (int8_t)mode));
    run_case(&c);
  }
}

static void sweep_concat(void) {
  static const struct {
    const char *name;
    int32_t shapes[3][4];
    int32_t axis;
  } specs[] = {{"axis 3 [2,3,4,5|2|7]", {{2, 3, 4, 5}, {2, 3, 4, 2}, {2, 3, 4, 7}}, 3},
               {"axis 1 [2,3|1|4,4,5]", {{2, 3, 4, 5}, {2, 1, 4, 5}, {2, 4, 4, 5}}, 1},
               {"axis 0 [1|2|3,3,4,5]", {{1, 3, 4, 5}, {2, 3, 4, 5}, {3, 3, 4, 5}}, 0},
               {"axis -1 [2,3,4,5|2|7]", {{2, 3, 4, 5}, {2, 3, 4, 2}, {2, 3, 4, 7}}, -1}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (size_t t = 0; t < 4; t++) {
      const wick_dtype type = movement_types[t];
      if (i == 3 && t > 0) continue;
      sweep_case c;
      case_begin(&c, "CONCATENATION", EXACT, "%s %s", wick_dtype_name(type), specs[i].name);
      int32_t ins[3];
      for (int k = 0; k < 3; k++)
        ins[k] = input(&c, type, specs[i].shapes[k], 4, quant_for(&c, type), lo_for(type), 2);
      output(&c, type, quant_for(&c, type));
      tm_node *o = tm_table(c.b);
      tm_i32(o, 0, specs[i].axis);
      op(&c, WICK_BUILTIN_CONCATENATION, ins, 3, OPT_CONCATENATION, o);
      run_case(&c);
    }
  for (int t = 0; t < 2; t++) { /* 8-bit inputs quantized unlike the output: requantized */
    const wick_dtype type = t ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    const int64_t z = t ? 128 : 0;
    sweep_case c;
    case_begin(&c, "CONCATENATION", EXACT, "%s requantized axis 3", wick_dtype_name(type));
    int32_t ins[2];
    ins[0] = input(&c, type, S(2, 3, 4, 5), q(&c, 0.05f, z + 3), FULL, 0);
    ins[1] = input(&c, type, S(2, 3, 4, 9), q(&c, 0.02f, z - 7), FULL, 0);
    output(&c, type, q(&c, 0.04f, z + 1));
    tm_node *o = tm_table(c.b);
    tm_i32(o, 0, 3);
    op(&c, WICK_BUILTIN_CONCATENATION, ins, 2, OPT_CONCATENATION, o);
    run_case(&c);
  }
}

static void sweep_transpose(void) {
  static const struct {
    const char *name;
    int32_t shape[4], perm[4];
    size_t rank;
  } specs[] = {{"[2,3,4,5] perm [0,3,1,2]", {2, 3, 4, 5}, {0, 3, 1, 2}, 4},
               {"[2,3,4,5] perm [0,2,1,3]", {2, 3, 4, 5}, {0, 2, 1, 3}, 4},
               {"[37,53] perm [1,0]", {37, 53}, {1, 0}, 2},
               {"[3,5,7] perm [2,0,1]", {3, 5, 7}, {2, 0, 1}, 3},
               {"large [96,80,64] perm [2,1,0]", {96, 80, 64}, {2, 1, 0}, 3},
               {"large [8,128,160] perm [0,2,1]", {8, 128, 160}, {0, 2, 1}, 3}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (size_t t = 0; t < 4; t++) {
      const wick_dtype type = movement_types[t];
      if (i >= 4 && t != 0 && t != 1) continue;
      sweep_case c;
      case_begin(&c, "TRANSPOSE", EXACT, "%s %s", wick_dtype_name(type), specs[i].name);
      int32_t ins[2];
      ins[0] = input(&c, type, specs[i].shape, specs[i].rank, quant_for(&c, type), lo_for(type), 2);
      ins[1] = const_i32(&c, (const int32_t[]){(int32_t)specs[i].rank}, 1, specs[i].perm);
      output(&c, type, quant_for(&c, type));
      op(&c, WICK_BUILTIN_TRANSPOSE, ins, 2, OPT_TRANSPOSE, opt_empty(&c));
      run_case(&c);
    }
}

static void sweep_resize(void) {
  static const struct {
    const char *name;
    int32_t shape[4], size[2];
    bool align_corners, half_pixel;
  } specs[] = {{"[1,5,7,3]->9x13", {1, 5, 7, 3}, {9, 13}, false, false},
               {"[1,5,7,3]->9x13 align_corners", {1, 5, 7, 3}, {9, 13}, true, false},
               {"[1,5,7,3]->9x13 half_pixel", {1, 5, 7, 3}, {9, 13}, false, true},
               {"[2,9,11,4]->4x5 half_pixel", {2, 9, 11, 4}, {4, 5}, false, true},
               {"[1,8,8,16]->16x16", {1, 8, 8, 16}, {16, 16}, false, false}};
  for (int nearest = 0; nearest < 2; nearest++)
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
      for (size_t t = 0; t < 4; t++) {
        const wick_dtype type = movement_types[t];
        sweep_case c;
        case_begin(&c, nearest ? "RESIZE_NEAREST_NEIGHBOR" : "RESIZE_BILINEAR",
                   nearest ? EXACT : TOL_FLOAT, "%s %s", wick_dtype_name(type), specs[i].name);
        if (type != WICK_DTYPE_FLOAT32) c.tol = EXACT;
        int32_t ins[2];
        ins[0] = input(&c, type, specs[i].shape, 4, quant_for(&c, type), lo_for(type), 2);
        ins[1] = const_i32(&c, S(2), specs[i].size);
        output(&c, type, quant_for(&c, type));
        tm_node *o = tm_table(c.b);
        tm_u8(o, nearest ? 0 : 2, specs[i].align_corners);
        tm_u8(o, nearest ? 1 : 3, specs[i].half_pixel);
        op(&c, nearest ? WICK_BUILTIN_RESIZE_NEAREST_NEIGHBOR : WICK_BUILTIN_RESIZE_BILINEAR, ins,
           2, nearest ? OPT_RESIZE_NEAREST_NEIGHBOR : OPT_RESIZE_BILINEAR, o);
        run_case(&c);
      }
}

/* ---------------------------------------------------------------- QUANTIZE / DEQUANTIZE */

static void sweep_quantize(void) {
  static const struct {
    wick_dtype type;
    float scale;
    int64_t zp;
  } forms[] = {{WICK_DTYPE_INT8, 0.02f, 3},
               {WICK_DTYPE_UINT8, 0.02f, 128},
               {WICK_DTYPE_INT16, 0.0002f, 0}};
  static const struct {
    const char *name;
    int32_t shape[4];
    size_t rank;
  } shapes[] = {{"[3,37]", {3, 37}, 2},
                {"[1,5]", {1, 5}, 2},
                {"large [4,256,300]", {4, 256, 300}, 3}};
  for (size_t f = 0; f < 3; f++)
    for (size_t s = 0; s < 3; s++) {
      if (s == 2 && f != 0) continue;
      sweep_case c;
      case_begin(&c, "QUANTIZE", EXACT, "float32->%s %s", wick_dtype_name(forms[f].type),
                 shapes[s].name);
      int32_t in = input(&c, WICK_DTYPE_FLOAT32, shapes[s].shape, shapes[s].rank, NULL, -2.5, 2.5);
      output(&c, forms[f].type, q(&c, forms[f].scale, forms[f].zp));
      op(&c, WICK_BUILTIN_QUANTIZE, &in, 1, OPT_NONE, NULL);
      run_case(&c);
      case_begin(&c, "DEQUANTIZE", EXACT, "%s->float32 %s", wick_dtype_name(forms[f].type),
                 shapes[s].name);
      in = input(&c, forms[f].type, shapes[s].shape, shapes[s].rank,
                 q(&c, forms[f].scale, forms[f].zp), FULL, 0);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, WICK_BUILTIN_DEQUANTIZE, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
  { /* per-channel */
    float scales[8];
    channel_scales(scales, 5, 0.02f);
    sweep_case c;
    case_begin(&c, "QUANTIZE", EXACT, "float32->int8 per-channel [3,4,5]");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 4, 5), NULL, -2, 2);
    shaped_output(&c, WICK_DTYPE_INT8, S(3, 4, 5), q_channels(&c, scales, 5, 2));
    op(&c, WICK_BUILTIN_QUANTIZE, &in, 1, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "DEQUANTIZE", EXACT, "int8->float32 per-channel constant [3,4,5]");
    int32_t w =
        random_constant(&c, WICK_DTYPE_INT8, S(3, 4, 5), q_channels(&c, scales, 5, 2), FULL, 0);
    int32_t x = input(&c, WICK_DTYPE_FLOAT32, S(3, 4, 5), NULL, -2, 2);
    int32_t wf = add_tensor(&c, WICK_DTYPE_FLOAT32, S(3, 4, 5), 0, NULL);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    tm_g_op(&c.g, WICK_BUILTIN_DEQUANTIZE, &w, 1, &wf, 1, OPT_NONE, NULL);
    op(&c, WICK_BUILTIN_ADD, (const int32_t[]){x, wf}, 2, OPT_ADD, opt_i8(&c, 0));
    run_case(&c);
    case_begin(&c, "DEQUANTIZE", EXACT, "float16->float32 [3,37]");
    in = input(&c, WICK_DTYPE_FLOAT16, S(3, 37), NULL, 0, 0);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_DEQUANTIZE, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
  static const struct {
    const char *name;
    wick_dtype from, to;
    qparams in, out;
  } requant[] = {{"int8->int8", WICK_DTYPE_INT8, WICK_DTYPE_INT8, {0.05f, 3}, {0.03f, -9}},
                 {"uint8->int8", WICK_DTYPE_UINT8, WICK_DTYPE_INT8, {0.05f, 128}, {0.05f, 0}},
                 {"int8->uint8", WICK_DTYPE_INT8, WICK_DTYPE_UINT8, {0.05f, 3}, {0.07f, 120}},
                 {"int16->int8", WICK_DTYPE_INT16, WICK_DTYPE_INT8, {0.001f, 0}, {0.2f, 2}},
                 {"int16->int16", WICK_DTYPE_INT16, WICK_DTYPE_INT16, {0.001f, 0}, {0.0015f, 0}}};
  for (size_t r = 0; r < sizeof requant / sizeof requant[0]; r++) {
    sweep_case c;
    case_begin(&c, "QUANTIZE", EXACT, "%s [3,37]", requant[r].name);
    int32_t in = input(&c, requant[r].from, S(3, 37),
                       q(&c, requant[r].in.scale, requant[r].in.zero_point), FULL, 0);
    output(&c, requant[r].to, q(&c, requant[r].out.scale, requant[r].out.zero_point));
    op(&c, WICK_BUILTIN_QUANTIZE, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- the other ops
 * Most run the reference kernels on every set; they are here so that a path added later
 * (or a portable fast path: comparisons by rows, SELECT's row walk, REDUCE_ANY's byte rows,
 * the strided copies of the movement ops) is compared from its first day. */

static void sweep_compare_logical(void) {
  static const struct {
    const char *name;
    int32_t code;
  } ops[] = {{"EQUAL", WICK_BUILTIN_EQUAL},     {"NOT_EQUAL", WICK_BUILTIN_NOT_EQUAL},
             {"LESS", WICK_BUILTIN_LESS},       {"LESS_EQUAL", WICK_BUILTIN_LESS_EQUAL},
             {"GREATER", WICK_BUILTIN_GREATER}, {"GREATER_EQUAL", WICK_BUILTIN_GREATER_EQUAL}};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t s = 0; s < 3; s++)
      for (int t = 0; t < 3; t++) {
        const wick_dtype type = t == 0   ? WICK_DTYPE_FLOAT32
                                : t == 1 ? WICK_DTYPE_INT32
                                         : WICK_DTYPE_INT8;
        if (t == 2 && s != 0) continue;
        const shape_pair *sp = &binary_shapes[s];
        sweep_case c;
        case_begin(&c, ops[o].name, EXACT, "%s %s", wick_dtype_name(type), sp->name);
        /* a few distinct values, so that equality happens */
        /* int8 without quantization: wick compares raw int8, not quantized values */
        int32_t ins[2] = {input(&c, type, sp->a, sp->ra, NULL, -3, 3),
                          input(&c, type, sp->b, sp->rb, NULL, -3, 3)};
        output(&c, WICK_DTYPE_BOOL, NULL);
        op(&c, ops[o].code, ins, 2, OPT_NONE, NULL);
        run_case(&c);
      }
  /* quantized int8 / uint8: both inputs rescaled by their own scales before the comparison
   * (LiteRT's scaled comparison); values near each other so that ties happen */
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int t = 0; t < 2; t++)
      for (size_t s = 0; s < 2; s++) {
        const wick_dtype type = t == 0 ? WICK_DTYPE_INT8 : WICK_DTYPE_UINT8;
        const int32_t zp = t == 0 ? -3 : 125;
        const shape_pair *sp = &binary_shapes[s];
        sweep_case c;
        case_begin(&c, ops[o].name, EXACT, "%s quantized %s", wick_dtype_name(type), sp->name);
        int32_t ins[2] = {input(&c, type, sp->a, sp->ra, q(&c, 0.05f, zp), zp - 8, zp + 8),
                          input(&c, type, sp->b, sp->rb, q(&c, 0.1f, zp + 2), zp - 2, zp + 6)};
        output(&c, WICK_DTYPE_BOOL, NULL);
        op(&c, ops[o].code, ins, 2, OPT_NONE, NULL);
        run_case(&c);
      }
  static const struct {
    const char *name;
    int32_t code;
  } logical[] = {{"LOGICAL_AND", WICK_BUILTIN_LOGICAL_AND},
                 {"LOGICAL_OR", WICK_BUILTIN_LOGICAL_OR}};
  for (size_t o = 0; o < 2; o++)
    for (size_t s = 0; s < 3; s++) {
      const shape_pair *sp = &binary_shapes[s];
      sweep_case c;
      case_begin(&c, logical[o].name, EXACT, "bool %s", sp->name);
      int32_t ins[2] = {input(&c, WICK_DTYPE_BOOL, sp->a, sp->ra, NULL, 0, 1),
                        input(&c, WICK_DTYPE_BOOL, sp->b, sp->rb, NULL, 0, 1)};
      output(&c, WICK_DTYPE_BOOL, NULL);
      op(&c, logical[o].code, ins, 2, OPT_NONE, NULL);
      run_case(&c);
    }
  sweep_case c;
  case_begin(&c, "LOGICAL_NOT", EXACT, "bool [3,37]");
  int32_t in = input(&c, WICK_DTYPE_BOOL, S(3, 37), NULL, 0, 1);
  output(&c, WICK_DTYPE_BOOL, NULL);
  op(&c, WICK_BUILTIN_LOGICAL_NOT, &in, 1, OPT_NONE, NULL);
  run_case(&c);
  for (int v2 = 0; v2 < 2; v2++)
    for (int t = 0; t < 2; t++) {
      const wick_dtype type = t ? WICK_DTYPE_INT8 : WICK_DTYPE_FLOAT32;
      case_begin(&c, v2 ? "SELECT_V2" : "SELECT", EXACT, "%s %s", wick_dtype_name(type),
                 v2 ? "cond [37] x [2,5,37] y [5,1]" : "[2,5,37]");
      int32_t ins[3];
      ins[0] = v2 ? input(&c, WICK_DTYPE_BOOL, S(37), NULL, 0, 1)
                  : input(&c, WICK_DTYPE_BOOL, S(2, 5, 37), NULL, 0, 1);
      ins[1] = input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
      ins[2] = v2 ? input(&c, type, S(5, 1), quant_for(&c, type), lo_for(type), 2)
                  : input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
      output(&c, type, quant_for(&c, type));
      op(&c, v2 ? WICK_BUILTIN_SELECT_V2 : WICK_BUILTIN_SELECT, ins, 3, OPT_NONE, NULL);
      run_case(&c);
    }
}

static void sweep_binary_more(void) {
  static const binary_op ops[] = {
      {"FLOOR_DIV", WICK_BUILTIN_FLOOR_DIV, OPT_NONE, true, 0.25, 2, -4, 4},
      {"FLOOR_MOD", WICK_BUILTIN_FLOOR_MOD, OPT_NONE, true, 0.25, 2, -4, 4},
      {"POW", WICK_BUILTIN_POW, OPT_NONE, false, -2, 2, 0.1, 3},
  };
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t s = 0; s < 3; s++)
      binary_case(&ops[o], &binary_shapes[s], ACT_NONE, WICK_DTYPE_FLOAT32);
  static const binary_op int_ops[] = {
      {"ADD", WICK_BUILTIN_ADD, OPT_ADD, true, -1000, 1000, -1000, 1000},
      {"SUB", WICK_BUILTIN_SUB, OPT_SUB, true, -1000, 1000, -1000, 1000},
      {"MUL", WICK_BUILTIN_MUL, OPT_MUL, true, -1000, 1000, -1000, 1000},
      {"MAXIMUM", WICK_BUILTIN_MAXIMUM, OPT_NONE, true, -1000, 1000, -1000, 1000},
      {"FLOOR_DIV", WICK_BUILTIN_FLOOR_DIV, OPT_NONE, true, 1, 30, -1000, 1000},
      {"FLOOR_MOD", WICK_BUILTIN_FLOOR_MOD, OPT_NONE, true, 1, 30, -1000, 1000},
      {"BITWISE_XOR", WICK_BUILTIN_BITWISE_XOR, OPT_NONE, true, -1000, 1000, -1000, 1000},
  };
  for (size_t o = 0; o < sizeof int_ops / sizeof int_ops[0]; o++)
    for (size_t s = 0; s < 2; s++)
      binary_case(&int_ops[o], &binary_shapes[s], ACT_NONE, WICK_DTYPE_INT32);
  sweep_case c;
  case_begin(&c, "ATAN2", TOL_FLOAT, "float32 [3,37]");
  int32_t ins[2] = {input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -2, 2),
                    input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -2, 2)};
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  op(&c, WICK_BUILTIN_ATAN2, ins, 2, OPT_NONE, NULL);
  run_case(&c);
}

/* One op over one float32 or int8 input and constant int32 operands. */
typedef struct shape_op {
  const char *name, *variant;
  int32_t code;
  uint8_t opt;
  int32_t in[4];
  size_t rank;
  int32_t consts[3][8]; /* int32 constant operands after the input, each `const_len` long */
  size_t const_len[3], nconst;
  int32_t opt_a, opt_b; /* options fields 0 and 1 (i32), where the table has them */
  size_t nout;
} shape_op;

static void shape_op_case(const shape_op *so, wick_dtype type) {
  sweep_case c;
  case_begin(&c, so->name, EXACT, "%s %s", wick_dtype_name(type), so->variant);
  int32_t ins[4];
  const bool split = so->code == WICK_BUILTIN_SPLIT; /* SPLIT(axis, input) */
  ins[split ? 1 : 0] = input(&c, type, so->in, so->rank, quant_for(&c, type), lo_for(type), 2);
  for (size_t k = 0; k < so->nconst; k++)
    ins[split ? 0 : 1 + k] =
        so->const_len[k] == 0 ? const_i32(&c, NULL, 0, so->consts[k])
        : so->code == WICK_BUILTIN_GATHER_ND /* indices [n, 2] */
            ? const_i32(&c, (const int32_t[]){(int32_t)so->const_len[k] / 2, 2}, 2, so->consts[k])
            : const_i32(&c, (const int32_t[]){(int32_t)so->const_len[k]}, 1, so->consts[k]);
  const bool index_out = so->code == WICK_BUILTIN_ARG_MAX || so->code == WICK_BUILTIN_ARG_MIN;
  for (size_t k = 0; k < so->nout; k++)
    output(&c, index_out ? WICK_DTYPE_INT32 : type, index_out ? NULL : quant_for(&c, type));
  tm_node *o = NULL;
  if (so->opt != OPT_NONE) {
    o = tm_table(c.b);
    tm_i32(o, 0, so->opt_a);
    tm_i32(o, 1, so->opt_b);
  }
  op(&c, so->code, ins, 1 + so->nconst, so->opt, o);
  run_case(&c);
}

static void sweep_movement(void) {
  static const shape_op ops[] = {
      {"RESHAPE",
       "[2,3,4,5]->[6,20]",
       WICK_BUILTIN_RESHAPE,
       OPT_NONE,
       {2, 3, 4, 5},
       4,
       {{6, 20}},
       {2},
       1,
       0,
       0,
       1},
      {"EXPAND_DIMS",
       "[3,37] axis 1",
       WICK_BUILTIN_EXPAND_DIMS,
       OPT_NONE,
       {3, 37},
       2,
       {{1}},
       {0},
       1,
       0,
       0,
       1},
      {"SLICE",
       "[2,3,4,5] begin [0,1,1,2] size [2,2,-1,3]",
       WICK_BUILTIN_SLICE,
       OPT_NONE,
       {2, 3, 4, 5},
       4,
       {{0, 1, 1, 2}, {2, 2, -1, 3}},
       {4, 4},
       2,
       0,
       0,
       1},
      {"STRIDED_SLICE",
       "[5,6,7] [1:5:2, ::-1, 2:7:3]",
       WICK_BUILTIN_STRIDED_SLICE,
       OPT_STRIDED_SLICE,
       {5, 6, 7},
       3,
       {{1, 0, 2}, {5, 0, 7}, {2, -1, 3}},
       {3, 3, 3},
       3,
       2 /* begin_mask: axis 1 */,
       2 /* end_mask: axis 1 */,
       1},
      {"TILE",
       "[2,3,5] multiples [2,1,3]",
       WICK_BUILTIN_TILE,
       OPT_NONE,
       {2, 3, 5},
       3,
       {{2, 1, 3}},
       {3},
       1,
       0,
       0,
       1},
      {"REVERSE_V2",
       "[3,4,5] axis 1",
       WICK_BUILTIN_REVERSE_V2,
       OPT_NONE,
       {3, 4, 5},
       3,
       {{1}},
       {1},
       1,
       0,
       0,
       1},
      {"BROADCAST_TO",
       "[3,1,5]->[2,3,4,5]",
       WICK_BUILTIN_BROADCAST_TO,
       OPT_NONE,
       {3, 1, 5},
       3,
       {{2, 3, 4, 5}},
       {4},
       1,
       0,
       0,
       1},
      {"SPACE_TO_DEPTH",
       "[1,6,4,3] block 2",
       WICK_BUILTIN_SPACE_TO_DEPTH,
       OPT_SPACE_TO_DEPTH,
       {1, 6, 4, 3},
       4,
       {{0}},
       {0},
       0,
       2,
       0,
       1},
      {"DEPTH_TO_SPACE",
       "[1,3,2,12] block 2",
       WICK_BUILTIN_DEPTH_TO_SPACE,
       OPT_DEPTH_TO_SPACE,
       {1, 3, 2, 12},
       4,
       {{0}},
       {0},
       0,
       2,
       0,
       1},
      {"GATHER",
       "[5,6,7] axis 1 indices [4]",
       WICK_BUILTIN_GATHER,
       OPT_GATHER,
       {5, 6, 7},
       3,
       {{5, 0, 3, 3}},
       {4},
       1,
       1,
       0,
       1},
      {"GATHER_ND",
       "[5,6,7] indices [3,2]",
       WICK_BUILTIN_GATHER_ND,
       OPT_NONE,
       {5, 6, 7},
       3,
       {{4, 5, 0, 0, 2, 3}},
       {6},
       1,
       0,
       0,
       1},
      {"SPLIT",
       "[4,6,5] axis 1 in 3",
       WICK_BUILTIN_SPLIT,
       OPT_SPLIT,
       {4, 6, 5},
       3,
       {{1}},
       {0},
       1,
       3,
       0,
       3},
      {"SPLIT_V",
       "[4,6,5] axis 1 sizes [1,3,2]",
       WICK_BUILTIN_SPLIT_V,
       OPT_SPLIT_V,
       {4, 6, 5},
       3,
       {{1, 3, 2}, {1}},
       {3, 0},
       2,
       3,
       0,
       3},
      {"UNPACK",
       "[3,4,5] axis 1",
       WICK_BUILTIN_UNPACK,
       OPT_UNPACK,
       {3, 4, 5},
       3,
       {{0}},
       {0},
       0,
       4,
       1,
       4},
      {"ARG_MAX",
       "[3,4,37] axis 2",
       WICK_BUILTIN_ARG_MAX,
       OPT_NONE,
       {3, 4, 37},
       3,
       {{2}},
       {0},
       1,
       0,
       0,
       1},
      {"ARG_MIN",
       "[3,4,37] axis 1",
       WICK_BUILTIN_ARG_MIN,
       OPT_NONE,
       {3, 4, 37},
       3,
       {{1}},
       {0},
       1,
       0,
       0,
       1},
      {"CUMSUM",
       "[3,4,5] axis 1",
       WICK_BUILTIN_CUMSUM,
       OPT_NONE,
       {3, 4, 5},
       3,
       {{1}},
       {0},
       1,
       0,
       0,
       1},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    shape_op so = ops[i];
    /* the gather indices are a [3,2] / [4] int32 tensor, the split axis comes first */
    shape_op_case(&so, WICK_DTYPE_FLOAT32);
    if (so.code != WICK_BUILTIN_CUMSUM) shape_op_case(&so, WICK_DTYPE_INT8);
  }
}

static void sweep_misc(void) {
  sweep_case c;
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_INT8 : WICK_DTYPE_FLOAT32;
    case_begin(&c, "SQUEEZE", EXACT, "%s [3,1,5,1] dims [1]", wick_dtype_name(type));
    int32_t in = input(&c, type, S(3, 1, 5, 1), quant_for(&c, type), lo_for(type), 2);
    output(&c, type, quant_for(&c, type));
    tm_node *o = tm_table(c.b);
    tm_ref(o, 0, tm_vec_i32(c.b, (const int32_t[]){1}, 1));
    op(&c, WICK_BUILTIN_SQUEEZE, &in, 1, OPT_SQUEEZE, o);
    run_case(&c);
    case_begin(&c, "PACK", EXACT, "%s 3 x [4,5] axis 1", wick_dtype_name(type));
    int32_t ins[3];
    for (int k = 0; k < 3; k++)
      ins[k] = input(&c, type, S(4, 5), quant_for(&c, type), lo_for(type), 2);
    output(&c, type, quant_for(&c, type));
    o = tm_table(c.b);
    tm_i32(o, 0, 3);
    tm_i32(o, 1, 1);
    op(&c, WICK_BUILTIN_PACK, ins, 3, OPT_PACK, o);
    run_case(&c);
    if (type == WICK_DTYPE_FLOAT32) {
      case_begin(&c, "ZEROS_LIKE", EXACT, "%s [3,37]", wick_dtype_name(type));
      c.constant_ok = true;
      in = input(&c, type, S(3, 37), NULL, -2, 2);
      output(&c, type, NULL);
      op(&c, WICK_BUILTIN_ZEROS_LIKE, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
    case_begin(&c, "SHAPE", EXACT, "%s [3,1,5,2]", wick_dtype_name(type));
    in = input(&c, type, S(3, 1, 5, 2), quant_for(&c, type), lo_for(type), 2);
    output(&c, WICK_DTYPE_INT32, NULL);
    op(&c, WICK_BUILTIN_SHAPE, &in, 1, OPT_SHAPE, opt_i8(&c, WICK_DTYPE_INT32));
    run_case(&c);
  }
  static const struct {
    wick_dtype from, to;
  } casts[] = {{WICK_DTYPE_FLOAT32, WICK_DTYPE_INT32},
               {WICK_DTYPE_INT32, WICK_DTYPE_FLOAT32},
               {WICK_DTYPE_FLOAT32, WICK_DTYPE_UINT8},
               {WICK_DTYPE_BOOL, WICK_DTYPE_FLOAT32}};
  for (size_t k = 0; k < sizeof casts / sizeof casts[0]; k++) {
    case_begin(&c, "CAST", EXACT, "%s->%s [3,37]", wick_dtype_name(casts[k].from),
               wick_dtype_name(casts[k].to));
    int32_t in = input(&c, casts[k].from, S(3, 37), NULL,
                       casts[k].from == WICK_DTYPE_FLOAT32 ? -30 : -1000, 300);
    output(&c, casts[k].to, NULL);
    tm_node *o = tm_table(c.b);
    tm_i8(o, 0, (int8_t)casts[k].from);
    tm_i8(o, 1, (int8_t)casts[k].to);
    op(&c, WICK_BUILTIN_CAST, &in, 1, OPT_CAST, o);
    run_case(&c);
  }
  {
    case_begin(&c, "FILL", EXACT, "float32 dims [2,3,4]");
    c.constant_ok = true;
    int32_t ins[2];
    ins[0] = const_i32(&c, S(3), (const int32_t[]){2, 3, 4});
    ins[1] = input(&c, WICK_DTYPE_FLOAT32, NULL, 0, NULL, -2, 2);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_FILL, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "RANGE", EXACT, "int32 [-7, 40) step 3");
    ins[0] = input(&c, WICK_DTYPE_INT32, NULL, 0, NULL, -7, -7);
    int32_t limit = const_i32(&c, NULL, 0, (const int32_t[]){40});
    int32_t delta = const_i32(&c, NULL, 0, (const int32_t[]){3});
    output(&c, WICK_DTYPE_INT32, NULL);
    op(&c, WICK_BUILTIN_RANGE, (const int32_t[]){ins[0], limit, delta}, 3, OPT_NONE, NULL);
    run_case(&c);
  }
  {
    case_begin(&c, "L2_NORMALIZATION", TOL_FLOAT, "float32 [3,5,37]");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 5, 37), NULL, -2, 2);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_L2_NORMALIZATION, &in, 1, OPT_L2_NORM, opt_i8(&c, 0));
    run_case(&c);
    case_begin(&c, "L2_NORMALIZATION", EXACT, "int8 [3,5,37] (output 1/128)");
    in = input(&c, WICK_DTYPE_INT8, S(3, 5, 37), q(&c, 0.05f, -3), FULL, 0);
    output(&c, WICK_DTYPE_INT8, q(&c, 1.0f / 128.0f, 0));
    op(&c, WICK_BUILTIN_L2_NORMALIZATION, &in, 1, OPT_L2_NORM, opt_i8(&c, 0));
    run_case(&c);
  }
  {
    case_begin(&c, "TOPK_V2", EXACT, "float32 [3,37] k 5");
    int32_t ins[2];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -2, 2);
    ins[1] = const_i32(&c, NULL, 0, (const int32_t[]){5});
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    output(&c, WICK_DTYPE_INT32, NULL);
    op(&c, WICK_BUILTIN_TOPK_V2, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "EMBEDDING_LOOKUP", EXACT, "float32 table [11,7] ids [5]");
    ins[0] = const_i32(&c, S(5), (const int32_t[]){3, 0, 10, 3, 7});
    ins[1] = input(&c, WICK_DTYPE_FLOAT32, S(11, 7), NULL, -2, 2);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_EMBEDDING_LOOKUP, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "SCATTER_ND", EXACT, "float32 indices [3,1] updates [3,4] shape [6,4]");
    int32_t sc[3];
    sc[0] = const_i32(&c, S(3, 1), (const int32_t[]){4, 0, 2});
    sc[1] = input(&c, WICK_DTYPE_FLOAT32, S(3, 4), NULL, -2, 2);
    sc[2] = const_i32(&c, S(2), (const int32_t[]){6, 4});
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_SCATTER_ND, sc, 3, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "DYNAMIC_UPDATE_SLICE", EXACT, "float32 [4,6,5] update [2,3,5] at [1,2,0]");
    sc[0] = input(&c, WICK_DTYPE_FLOAT32, S(4, 6, 5), NULL, -2, 2);
    sc[1] = input(&c, WICK_DTYPE_FLOAT32, S(2, 3, 5), NULL, -2, 2);
    sc[2] = const_i32(&c, S(3), (const int32_t[]){1, 2, 0});
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_DYNAMIC_UPDATE_SLICE, sc, 3, OPT_NONE, NULL);
    run_case(&c);
  }
  { /* complex64 */
    case_begin(&c, "RFFT2D", TOL_FLOAT, "float32 [2,8,16] fft_length [8,16]");
    int32_t ins[2];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 8, 16), NULL, -2, 2);
    ins[1] = const_i32(&c, S(2), (const int32_t[]){8, 16});
    output(&c, WICK_DTYPE_COMPLEX64, NULL);
    op(&c, WICK_BUILTIN_RFFT2D, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    static const struct {
      const char *name;
      int32_t code;
    } parts[] = {{"REAL", WICK_BUILTIN_REAL},
                 {"IMAG", WICK_BUILTIN_IMAG},
                 {"COMPLEX_ABS", WICK_BUILTIN_COMPLEX_ABS}};
    for (size_t k = 0; k < 3; k++) {
      case_begin(&c, parts[k].name, k == 2 ? TOL_FLOAT : EXACT, "complex64 [3,37]");
      int32_t in = input(&c, WICK_DTYPE_COMPLEX64, S(3, 37), NULL, -2, 2);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, parts[k].code, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
  }
  { /* CONV_3D (NDHWC, filter [kd,kh,kw,Cin,Cout]) and CONV_3D_TRANSPOSE */
    case_begin(&c, "CONV_3D", TOL_FLOAT, "float32 3x3x3 same [1,5,6,7,4]->6");
    int32_t ins[4];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(1, 5, 6, 7, 4), NULL, -2, 2);
    ins[1] = random_constant(&c, WICK_DTYPE_FLOAT32, S(3, 3, 3, 4, 6), NULL, -1, 1);
    ins[2] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6), NULL, -1, 1);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    tm_node *o = tm_table(c.b);
    tm_i8(o, CONV3D_PADDING, PAD_SAME);
    tm_i32(o, CONV3D_STRIDE_D, 1);
    tm_i32(o, CONV3D_STRIDE_W, 1);
    tm_i32(o, CONV3D_STRIDE_H, 1);
    op(&c, WICK_BUILTIN_CONV_3D, ins, 3, OPT_CONV_3D, o);
    run_case(&c);
    case_begin(&c, "CONV_3D_TRANSPOSE", TOL_FLOAT, "float32 2x2x2 stride 2 [1,3,4,5,4]->6");
    ins[0] = const_i32(&c, S(5), (const int32_t[]){1, 6, 8, 10, 6});
    ins[1] = random_constant(&c, WICK_DTYPE_FLOAT32, S(2, 2, 2, 6, 4), NULL, -1, 1);
    ins[2] = input(&c, WICK_DTYPE_FLOAT32, S(1, 3, 4, 5, 4), NULL, -2, 2);
    ins[3] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6), NULL, -1, 1);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    o = tm_table(c.b);
    tm_i8(o, CONV3D_PADDING, PAD_VALID);
    tm_i32(o, CONV3D_STRIDE_D, 2);
    tm_i32(o, CONV3D_STRIDE_W, 2);
    tm_i32(o, CONV3D_STRIDE_H, 2);
    op(&c, WICK_BUILTIN_CONV_3D_TRANSPOSE, ins, 4, OPT_CONV_3D, o);
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- recurrent ops (float32) */

/* A variable tensor (state the op updates in place), zeros at creation. */
static int32_t variable(sweep_case *c, const int32_t *shape, size_t rank) {
  int32_t t = add_tensor(c, WICK_DTYPE_FLOAT32, shape, rank, 0, NULL);
  tm_u8(c->g.tensors[t], 5 /* is_variable */, 1);
  return t;
}

static void sweep_recurrent(void) {
  sweep_case c;
  case_begin(&c, "SVDF", TOL_FLOAT, "float32 [2,5] filters 6 rank 2 memory 4 relu");
  int32_t ins[24];
  ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 5), NULL, -2, 2);
  ins[1] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6, 5), NULL, -1, 1);
  ins[2] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6, 4), NULL, -1, 1);
  ins[3] = random_constant(&c, WICK_DTYPE_FLOAT32, S(3), NULL, -1, 1);
  ins[4] = variable(&c, S(2, 24));
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  tm_node *o = tm_table(c.b);
  tm_i32(o, 0, 2);
  tm_i8(o, 1, ACT_RELU);
  op(&c, WICK_BUILTIN_SVDF, ins, 5, OPT_SVDF, o);
  run_case(&c);

  case_begin(&c, "UNIDIRECTIONAL_SEQUENCE_LSTM", TOL_FLOAT,
             "float32 batch 2 time 3 input 5 cell 4 tanh");
  for (int i = 0; i < 24; i++) ins[i] = -1;
  ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 3, 5), NULL, -2, 2);
  for (int i = 1; i <= 4; i++)
    ins[i] = random_constant(&c, WICK_DTYPE_FLOAT32, S(4, 5), NULL, -0.5, 0.5);
  for (int i = 5; i <= 8; i++)
    ins[i] = random_constant(&c, WICK_DTYPE_FLOAT32, S(4, 4), NULL, -0.5, 0.5);
  for (int i = 12; i <= 15; i++)
    ins[i] = random_constant(&c, WICK_DTYPE_FLOAT32, S(4), NULL, -0.5, 0.5);
  ins[18] = variable(&c, S(2, 4));
  ins[19] = variable(&c, S(2, 4));
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  o = tm_table(c.b);
  tm_i8(o, LSTM_ACTIVATION, 4 /* TANH */);
  op(&c, WICK_BUILTIN_UNIDIRECTIONAL_SEQUENCE_LSTM, ins, 24, OPT_UNIDIRECTIONAL_SEQUENCE_LSTM, o);
  run_case(&c);
}

/* ---------------------------------------------------------------- ready-made graphs */

/* A ready-made model of tiny_model.h, its one float32 input of `shape` drawn from [-2, 2]. */
static void graph_case(const char *op_name, double tol, const char *variant,
                       uint8_t *(*make)(size_t *), const int32_t *shape, size_t rank) {
  sweep_case c;
  case_begin(&c, op_name, tol, "%s", variant);
  c.in[0].type = WICK_DTYPE_FLOAT32;
  c.in[0].count = elements(shape, rank);
  c.in[0].lo = -2;
  c.in[0].hi = 2;
  c.nin = 1;
  c.prebuilt = make(&c.prebuilt_size);
  run_case(&c);
}

/* x[2,4] + DENSIFY(k): k the [2,4] constant [[0,0,1,0],[2,0,0,3]] stored as level 0 DENSE
 * (2 rows), level 1 SPARSE_CSR (segments [0,1,3], indices [2,0,3], values 1,2,3). */
static void densify_case(void) {
  sweep_case c;
  case_begin(&c, "DENSIFY", EXACT, "float32 [2,4] CSR constant, then ADD");
  const float values[3] = {1, 2, 3};
  const int32_t segments[3] = {0, 1, 3}, indices[3] = {2, 0, 3}, order[2] = {0, 1};
  int32_t x = input(&c, WICK_DTYPE_FLOAT32, S(2, 4), NULL, -2, 2);
  c.g.buffers[c.g.nbuf] = tm_buffer(c.b, values, sizeof values);
  int32_t k = add_tensor(&c, WICK_DTYPE_FLOAT32, S(2, 4), (uint32_t)c.g.nbuf++, NULL);
  tm_node *dense = tm_table(c.b), *csr = tm_table(c.b);
  tm_i8(dense, DIMMETA_FORMAT, DIMENSION_DENSE);
  tm_i32(dense, DIMMETA_DENSE_SIZE, 2);
  tm_i8(csr, DIMMETA_FORMAT, DIMENSION_SPARSE_CSR);
  tm_node *seg = tm_table(c.b), *idx = tm_table(c.b);
  tm_ref(seg, INDEX_VECTOR_VALUES, tm_vec_i32(c.b, segments, 3));
  tm_ref(idx, INDEX_VECTOR_VALUES, tm_vec_i32(c.b, indices, 3));
  tm_u8(csr, DIMMETA_SEGMENTS_TYPE, INDEX_VECTOR_INT32);
  tm_ref(csr, DIMMETA_SEGMENTS, seg);
  tm_u8(csr, DIMMETA_INDICES_TYPE, INDEX_VECTOR_INT32);
  tm_ref(csr, DIMMETA_INDICES, idx);
  tm_node *sparsity = tm_table(c.b), *levels[2] = {dense, csr};
  tm_ref(sparsity, SPARSITY_TRAVERSAL_ORDER, tm_vec_i32(c.b, order, 2));
  tm_ref(sparsity, SPARSITY_DIM_METADATA, tm_tvec(c.b, levels, 2));
  tm_ref(c.g.tensors[k], TENSOR_SPARSITY, sparsity);
  int32_t kd = add_tensor(&c, WICK_DTYPE_FLOAT32, S(2, 4), 0, NULL);
  tm_g_op(&c.g, WICK_BUILTIN_DENSIFY, &k, 1, &kd, 1, OPT_NONE, NULL);
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  op(&c, WICK_BUILTIN_ADD, (const int32_t[]){x, kd}, 2, OPT_ADD, opt_i8(&c, 0));
  run_case(&c);
}

/* IF: cond = GREATER(SUM(x), threshold) picks ADD(x, x) (subgraph 1) or MUL(x, x) (subgraph 2)
 * for x[1,4]; a threshold of -100 always takes "then", +100 always "else". */
static uint8_t *if_model(float threshold, size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  const int32_t s_x[2] = {1, 4}, s_axes[1] = {2}, axes[2] = {0, 1};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t tax = tm_g_const(&g, "axes", TM_I32, s_axes, 1, axes, sizeof axes, NULL);
  int32_t sum = tm_g_tensor(&g, "sum", TM_F32, NULL, 0);
  int32_t th = tm_g_const(&g, "threshold", TM_F32, NULL, 0, &threshold, 4, NULL);
  int32_t cond = tm_g_tensor(&g, "cond", TM_BOOL, NULL, 0);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
  tm_g_op(&g, WICK_BUILTIN_SUM, (const int32_t[]){x, tax}, 2, &sum, 1, 0, NULL);
  tm_g_op(&g, WICK_BUILTIN_GREATER, (const int32_t[]){sum, th}, 2, &cond, 1, 0, NULL);
  tm_node *o = tm_table(b); /* IfOptions (type 92): then 0, else 1 */
  tm_i32(o, 0, 1);
  tm_i32(o, 1, 2);
  tm_g_op(&g, WICK_BUILTIN_IF, (const int32_t[]){cond, x}, 2, &y, 1, 92, o);
  tm_node *sgs[3];
  const int32_t gin[1] = {x}, gout[1] = {y}, bin[1] = {0}, bout[1] = {1}, xx[2] = {0, 0};
  sgs[0] = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  for (int k = 0; k < 2; k++) {
    tm_node *bt[2] = {tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL),
                      tm_tensor(b, "y", TM_F32, s_x, 2, 0, NULL)};
    uint32_t code = tm_g_opcode(&g, k == 0 ? WICK_BUILTIN_ADD : WICK_BUILTIN_MUL, 1);
    tm_node *bop = tm_operator(b, code, xx, 2, bout, 1, 0, NULL);
    sgs[1 + k] = tm_subgraph(b, bt, 2, bin, 1, bout, 1, &bop, 1);
  }
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, sgs, 3, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}
static uint8_t *if_then_model(size_t *size_out) { return if_model(-100.0f, size_out); }
static uint8_t *if_else_model(size_t *size_out) { return if_model(100.0f, size_out); }

/* A resource variable initialised once: subgraph 0 runs CALL_ONCE(init = 1), then
 * h = VAR_HANDLE("acc"); y = READ_VARIABLE(h) + x; ASSIGN_VARIABLE(h, y); out y. Subgraph 1
 * assigns the constant [0.5, -1, 2, 0.25] to "acc". One invoke per kernel set: y = x + init. */
static uint8_t *variables_model(size_t *size_out) {
  enum { TM_RESOURCE = 13 };
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  const int32_t s_x[2] = {1, 4};
  const float init[4] = {0.5f, -1.0f, 2.0f, 0.25f};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t h = tm_g_tensor(&g, "h", TM_RESOURCE, NULL, 0);
  int32_t r = tm_g_tensor(&g, "r", TM_F32, s_x, 2);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
  tm_node *once = tm_table(b); /* CallOnceOptions (type 103): init_subgraph_index 0 */
  tm_i32(once, 0, 1);
  tm_g_op(&g, WICK_BUILTIN_CALL_ONCE, NULL, 0, NULL, 0, 103, once);
  tm_node *var = tm_table(b); /* VarHandleOptions (type 111): container 0, shared_name 1 */
  tm_ref(var, 1, tm_str(b, "acc"));
  tm_g_op(&g, WICK_BUILTIN_VAR_HANDLE, NULL, 0, &h, 1, 111, var);
  tm_g_op(&g, WICK_BUILTIN_READ_VARIABLE, &h, 1, &r, 1, 0, NULL);
  tm_g_op(&g, WICK_BUILTIN_ADD, (const int32_t[]){r, x}, 2, &y, 1, 0, NULL);
  tm_g_op(&g, WICK_BUILTIN_ASSIGN_VARIABLE, (const int32_t[]){h, y}, 2, NULL, 0, 0, NULL);
  /* the init subgraph: its own handle and a constant (a new model buffer) */
  g.buffers[g.nbuf] = tm_buffer(b, init, sizeof init);
  tm_node *it[2] = {tm_tensor(b, "h", TM_RESOURCE, NULL, 0, 0, NULL),
                    tm_tensor(b, "init", TM_F32, s_x, 2, (uint32_t)g.nbuf++, NULL)};
  tm_node *var2 = tm_table(b);
  tm_ref(var2, 1, tm_str(b, "acc"));
  tm_node *iops[2] = {tm_operator(b, tm_g_opcode(&g, WICK_BUILTIN_VAR_HANDLE, 1), NULL, 0,
                                  (const int32_t[]){0}, 1, 111, var2),
                      tm_operator(b, tm_g_opcode(&g, WICK_BUILTIN_ASSIGN_VARIABLE, 1),
                                  (const int32_t[]){0, 1}, 2, NULL, 0, 0, NULL)};
  tm_node *sgs[2];
  const int32_t gin[1] = {x}, gout[1] = {y};
  sgs[0] = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  sgs[1] = tm_subgraph(b, it, 2, NULL, 0, NULL, 0, iops, 2);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, sgs, 2, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

static void sweep_graphs(void) {
  graph_case("IF", EXACT, "float32 [1,4] cond = SUM(x) > -100: then ADD(x, x)", if_then_model,
             S(1, 4));
  graph_case("IF", EXACT, "float32 [1,4] cond = SUM(x) > 100: else MUL(x, x)", if_else_model,
             S(1, 4));
  graph_case("CALL_ONCE", EXACT, "float32 [1,4] init subgraph assigns; READ_VARIABLE + x; ASSIGN",
             variables_model, S(1, 4));
  mark_covered("VAR_HANDLE");
  mark_covered("READ_VARIABLE");
  mark_covered("ASSIGN_VARIABLE");
  densify_case();
  graph_case("WHILE", EXACT, "float32 [1,4] tm_demo_while: 3 x LESS, ADD", tm_demo_while, S(1, 4));
  graph_case("STABLEHLO_COMPOSITE", TOL_FLOAT,
             "float32 [1,2] tm_demo_composite: DEQUANTIZE, FC, ADD", tm_demo_composite, S(1, 2));
  /* a chain the optimized sets fuse (CONV_2D + RELU epilogue ...): fused against unfused */
  graph_case("(graph)", TOL_FLOAT, "tm_demo_chain: CONV_2D relu ... SOFTMAX, 3 outputs",
             tm_demo_chain, S(1, 4, 4, 2));
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  if (argc > 1) op_filter = argv[1];
  char why[256];
  if (!wick_op_tables_check(why, sizeof why)) {
    printf("FAIL: the op tables: %s\n", why);
    return 1;
  }
  clock_t start = clock();
  make_sets();
  char host[256];
  wick_cpu_describe(host_features, host, sizeof host);
  printf(
      "op sweep: each cell is that kernel set against the reference kernels (1 thread);\n"
      "ok = bit-identical, ~E = within the tolerance (E: largest relative error), "
      "- = not on this host (%s) or not in this build\n\n",
      host[0] ? host : "no optional ISA");
  print_header();
  sweep_binary_float();
  sweep_binary_quantized();
  sweep_unary();
  sweep_unary_quantized();
  sweep_prelu();
  sweep_conv();
  sweep_dwconv();
  sweep_fc();
  sweep_bmm();
  sweep_transpose_conv();
  sweep_pools();
  sweep_softmax();
  sweep_reduce();
  sweep_pad();
  sweep_concat();
  sweep_transpose();
  sweep_resize();
  sweep_quantize();
  sweep_compare_logical();
  sweep_binary_more();
  sweep_movement();
  sweep_misc();
  sweep_recurrent();
  sweep_graphs();
  wick_cpu_set_features_for_testing(host_features);

  printf(
      "\n%d cases (op x variant) x %d kernel sets: %d comparisons, %d bit-identical, "
      "%d within tolerance, %d DIFF, %d ERR, %d weak cases, %d cells not run (level absent); "
      "%.1f s CPU\n",
      num_cases, num_sets - 1, num_cells, num_cells - num_close - num_diff - num_err, num_close,
      num_diff, num_err, num_weak, num_absent, (double)(clock() - start) / CLOCKS_PER_SEC);
  if (report_len) printf("\n%s", report);
  if (op_filter == NULL) {
    size_t total = 0, missing = 0;
    char line[8192] = "";
    for (size_t i = 0; wick_op_at(i) != NULL; i++) {
      const wick_op_def *d = wick_op_at(i);
      total++;
      bool seen = false;
      for (size_t j = 0; j < num_covered && !seen; j++) seen = strcmp(covered[j], d->name) == 0;
      if (!seen) {
        missing++;
        if (strlen(line) + strlen(d->name) + 2 < sizeof line) {
          strcat(line, " ");
          strcat(line, d->name);
        }
      }
    }
    printf("\ncoverage: %zu of %zu op_table.inc entries swept; not swept:%s\n", total - missing,
           total, line);
  }
  free(report);
  if (num_diff || num_err || num_weak) {
    printf("FAIL: %d DIFF, %d ERR, %d weak cases\n", num_diff, num_err, num_weak);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
