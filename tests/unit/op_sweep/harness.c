/*
 * op_sweep/harness.c — the op sweep's machinery: the kernel sets, building a case's model,
 * running it on every set, comparing with the baseline, the table and its totals
 * (tests/unit/test_op_sweep.c describes the sweep; op_sweep/sweep.h is the interface).
 */
#include "op_sweep/sweep.h"

/* ---------------------------------------------------------------- kernel sets */

#define MAX_SETS 14
typedef struct kernel_set {
  char name[16];
  uint32_t features;
  bool force_reference;
  int threads;
  int baseline; /* the set this one is compared with (0: the reference) */
  bool exact;   /* compared bit for bit whatever the case's tolerance */
  bool available;
  /* A delegate set: the model runs with this built-in delegate (its CPU nodes on the reference
   * kernels); `float_tolerance`: its float outputs are held to TOL_FLOAT (it sums in its own
   * order), its integer outputs bit for bit. */
  const char *delegate;
  bool float_tolerance;
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

/* The test NNAPI library: $WICK_NNAPI_LIBRARY (ctest sets it), else the one this build made. */
static const char *nnapi_library(void) {
  const char *env = getenv("WICK_NNAPI_LIBRARY");
  if (env != NULL && env[0] != 0) return env;
#ifdef WICK_TEST_NNAPI_LIBRARY
  return WICK_TEST_NNAPI_LIBRARY;
#else
  return NULL;
#endif
}

/* A delegate set's delegate, taking partitions of one node (a case is mostly one op). */
static bool make_delegate(const kernel_set *k, wick_delegate **out) {
  wick_error_info err;
  if (strcmp(k->delegate, "reference") == 0) {
    wick_reference_delegate_options o = wick_reference_delegate_options_default();
    o.min_partition_nodes = 1;
    return wick_reference_delegate_create(&o, &err, out) == WICK_OK;
  }
  wick_nnapi_delegate_options o = wick_nnapi_delegate_options_default();
  o.library = nnapi_library();
  o.min_partition_nodes = 1;
  return wick_nnapi_delegate_create(&o, &err, out) == WICK_OK;
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
  /* the built-in delegates: "reference" (wick's reference kernels on its own buffers: bit for
   * bit) and NNAPI through the test NNAPI implementation (tests/nnapi/), when it loads */
  k = add_set("del-ref", 0, true, 1);
  k->delegate = "reference";
  k->exact = true;
  k = add_set("del-nnapi", 0, true, 1);
  k->delegate = "nnapi";
  k->float_tolerance = true;
  wick_delegate *d = NULL;
  const char *why = make_delegate(k, &d) ? wick_nnapi_delegate_unavailable_reason(d) : "";
  k->available = why != NULL && why[0] == 0; /* "": a usable NNAPI runtime */
  wick_delegate_destroy(d);
}

static clock_t start_clock;
static const char *op_filter; /* argv[1]: only ops whose name contains it */

static uint32_t next_random(sweep_case *c) {
  uint32_t x = c->rng;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return c->rng = x;
}
static double uniform(sweep_case *c) { return (next_random(c) >> 8) * (1.0 / 16777216.0); }

size_t elements(const int32_t *shape, size_t rank) {
  size_t n = 1;
  for (size_t i = 0; i < rank; i++) n *= (size_t)shape[i];
  return n;
}

size_t type_size(wick_dtype t) { return wick_dtype_size(t); }

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

void case_begin(sweep_case *c, const char *op, double tol, const char *fmt, ...) {
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

int32_t add_tensor(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                   uint32_t buffer, tm_node *quant) {
  char name[16];
  snprintf(name, sizeof name, "t%zu", c->g.nt);
  c->g.tensors[c->g.nt] = tm_tensor(c->b, name, (int)type, shape, rank, buffer, quant);
  return (int32_t)c->g.nt++;
}

/* A graph input of `type` and shape, its values drawn from [lo, hi] (lo FULL: the type's). */
int32_t input(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank, tm_node *quant,
              double lo, double hi) {
  if (isnan(lo)) type_range(type, &lo, &hi);
  case_input *in = &c->in[c->nin++];
  in->tensor = add_tensor(c, type, shape, rank, 0, quant);
  in->type = type;
  in->count = elements(shape, rank);
  in->lo = lo;
  in->hi = hi;
  return in->tensor;
}

int32_t constant(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank, tm_node *quant,
                 const void *data) {
  c->g.buffers[c->g.nbuf] = tm_buffer(c->b, data, elements(shape, rank) * type_size(type));
  return add_tensor(c, type, shape, rank, (uint32_t)c->g.nbuf++, quant);
}

/* A constant with random values from [lo, hi] (lo FULL: the type's range). */
int32_t random_constant(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                        tm_node *quant, double lo, double hi) {
  if (isnan(lo)) type_range(type, &lo, &hi);
  size_t n = elements(shape, rank);
  void *data = tm_xalloc(n * type_size(type));
  fill_random(c, type, data, n, lo, hi);
  int32_t t = constant(c, type, shape, rank, quant, data);
  free(data);
  return t;
}

int32_t const_i32(sweep_case *c, const int32_t *shape, size_t rank, const int32_t *v) {
  return constant(c, WICK_DTYPE_INT32, shape, rank, NULL, v);
}

/* A graph output; its shape is the op's to set (the declared one is a placeholder). */
int32_t output(sweep_case *c, wick_dtype type, tm_node *quant) {
  static const int32_t one[1] = {1};
  int32_t t = add_tensor(c, type, one, 1, 0, quant);
  c->out[c->nout++] = t;
  return t;
}

/* A graph output with its declared shape (per-channel quantization is checked against it). */
int32_t shaped_output(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                      tm_node *quant) {
  int32_t t = add_tensor(c, type, shape, rank, 0, quant);
  c->out[c->nout++] = t;
  return t;
}

tm_node *q(sweep_case *c, float scale, int64_t zero_point) {
  return tm_quant(c->b, &scale, &zero_point, 1, 0);
}
/* Per-channel symmetric quantization of n channels along `dim`, scales `scales`. */
tm_node *q_channels(sweep_case *c, const float *scales, size_t n, int32_t dim) {
  int64_t zero[256] = {0};
  if (n > 256) abort();
  return tm_quant(c->b, scales, zero, n, dim);
}
/* n per-channel scales around `base` (0.6x .. 1.4x). */
void channel_scales(float *scales, size_t n, float base) {
  for (size_t i = 0; i < n; i++) scales[i] = base * (0.6f + 0.1f * (float)(i % 9));
}

/* The one operator of the model: `outs` (its outputs, graph outputs in that order). */
void op(sweep_case *c, int32_t builtin, const int32_t *ins, size_t nin, uint8_t opt_type,
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
  size_t delegated; /* operators a delegate ran */
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
  wick_delegate *delegate = NULL;
  if (k->delegate != NULL) {
    if (!make_delegate(k, &delegate)) {
      snprintf(r->error, sizeof r->error, "the %s delegate could not be created", k->delegate);
      wick_model_destroy(model);
      return;
    }
    o.delegates = &delegate;
    o.num_delegates = 1;
  }
  st = wick_interpreter_create(model, NULL, &o, &err, &it);
  if (st != WICK_OK) {
    snprintf(r->error, sizeof r->error, "create: %s", err.message);
    wick_delegate_destroy(delegate);
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
  for (size_t i = 0; i < wick_interpreter_op_count(it); i++)
    if (wick_interpreter_op_delegate(it, i) != NULL) r->delegated++;
  r->ok = true;
done:
  wick_interpreter_destroy(it);
  wick_delegate_destroy(delegate);
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
static int num_cases, num_diff, num_err, num_cells, num_close, num_absent, num_weak, num_declined;
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

void mark_covered(const char *op_name) {
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
void run_case(sweep_case *c) {
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
      const run_result *base = &results[sets[k].baseline];
      if (sets[k].delegate != NULL && results[k].ok && results[k].delegated == 0) {
        printf(" %-11s", "cpu"); /* the delegate declined it: nothing of the delegate to compare */
        num_declined++;
        continue;
      }
      num_cells++;
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
        compare(&results[k], base,
                sets[k].float_tolerance ? TOL_FLOAT
                : sets[k].exact         ? EXACT
                                        : c->tol,
                &v);
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

const char *const act_names[4] = {"", " relu", " relu_n1_to_1", " relu6"};

tm_node *opt_conv(sweep_case *c, int padding, int stride_h, int stride_w, int act, int dilation_h,
                  int dilation_w) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, CONV_PADDING, (int8_t)padding);
  tm_i32(o, CONV_STRIDE_W, stride_w);
  tm_i32(o, CONV_STRIDE_H, stride_h);
  tm_i8(o, CONV_ACTIVATION, (int8_t)act);
  tm_i32(o, CONV_DILATION_W, dilation_w);
  tm_i32(o, CONV_DILATION_H, dilation_h);
  return o;
}

tm_node *opt_dwconv(sweep_case *c, int padding, int stride, int multiplier, int act, int dilation) {
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

tm_node *opt_pool(sweep_case *c, int padding, int stride, int size, int act) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, POOL_PADDING, (int8_t)padding);
  tm_i32(o, POOL_STRIDE_W, stride);
  tm_i32(o, POOL_STRIDE_H, stride);
  tm_i32(o, POOL_FILTER_W, size);
  tm_i32(o, POOL_FILTER_H, size);
  tm_i8(o, POOL_ACTIVATION, (int8_t)act);
  return o;
}

tm_node *opt_fc(sweep_case *c, int act, bool keep_num_dims, bool asymmetric) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, FC_ACTIVATION, (int8_t)act);
  tm_u8(o, FC_KEEP_NUM_DIMS, keep_num_dims);
  tm_u8(o, FC_ASYMMETRIC_QUANTIZE, asymmetric);
  return o;
}

/* One scalar field 0 (a fused activation, an axis, keep_dims ...); a table for the union. */
tm_node *opt_i8(sweep_case *c, int8_t v) {
  tm_node *o = tm_table(c->b);
  tm_i8(o, 0, v);
  return o;
}
tm_node *opt_f32(sweep_case *c, float v) {
  tm_node *o = tm_table(c->b);
  tm_f32(o, 0, v);
  return o;
}
tm_node *opt_empty(sweep_case *c) { return tm_table(c->b); }

/* An output scale that keeps most of a K-term dot product of full-range operands in range:
 * q_in and q_w are the operands' largest magnitudes in steps, q_out the output's. */
float dot_scale(int k, float s_in, double q_in, float s_w, double q_w, double q_out) {
  return (float)(sqrt((double)k) * q_in * s_in * q_w * s_w / (1.5 * q_out));
}

/* The quantization of a pass-through op's operands (pools, movement): one node per tensor
 * (tiny_model.h would write a node shared by two tensors behind the second). */
tm_node *quant_for(sweep_case *c, wick_dtype type) {
  switch (type) {
    case WICK_DTYPE_INT8: return q(c, 0.05f, -3);
    case WICK_DTYPE_UINT8: return q(c, 0.05f, 125);
    case WICK_DTYPE_INT16: return q(c, 0.001f, 0);
    default: return NULL;
  }
}
double lo_for(wick_dtype type) { return type == WICK_DTYPE_FLOAT32 ? -2 : FULL; }

const wick_dtype movement_types[4] = {WICK_DTYPE_FLOAT32, WICK_DTYPE_INT8, WICK_DTYPE_UINT8,
                                      WICK_DTYPE_INT16};

/* ---------------------------------------------------------------- begin and end */

bool sweep_begin(int argc, char **argv) {
  if (argc > 1) op_filter = argv[1];
  char why[256];
  if (!wick_op_tables_check(why, sizeof why)) {
    printf("FAIL: the op tables: %s\n", why);
    return false;
  }
  start_clock = clock();
  make_sets();
  char host[256];
  wick_cpu_describe(host_features, host, sizeof host);
  printf(
      "op sweep: each cell is that kernel set against the reference kernels (1 thread);\n"
      "ok = bit-identical, ~E = within the tolerance (E: largest relative error), "
      "- = not on this host (%s) or not in this build;\n"
      "del-ref, del-nnapi: the model on that delegate (del-nnapi: float outputs within the "
      "tolerance), cpu = the delegate declined the op\n\n",
      host[0] ? host : "no optional ISA");
  print_header();
  return true;
}

int sweep_end(void) {
  wick_cpu_set_features_for_testing(host_features);

  printf(
      "\n%d cases (op x variant) x %d kernel sets: %d comparisons, %d bit-identical, "
      "%d within tolerance, %d DIFF, %d ERR, %d weak cases, %d cells not run (level absent), "
      "%d declined by a delegate; %.1f s CPU\n",
      num_cases, num_sets - 1, num_cells, num_cells - num_close - num_diff - num_err, num_close,
      num_diff, num_err, num_weak, num_absent, num_declined,
      (double)(clock() - start_clock) / CLOCKS_PER_SEC);
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
