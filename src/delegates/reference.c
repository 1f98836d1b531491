/*
 * reference.c — "reference", the test delegate: it runs float32 ADD SUB MUL
 * DIV MAXIMUM MINIMUM, the activations RELU RELU6 RELU_N1_TO_1 LOGISTIC TANH
 * HARD_SWISH, ABS NEG EXP SQRT RSQRT, FULLY_CONNECTED, SOFTMAX, and RESHAPE
 * SQUEEZE EXPAND_DIMS (any type), with wick's reference kernels
 * (src/kernels/reference/), so that every part of the delegate machinery in
 * src/core/delegate.c can be tested without an accelerator.
 *
 * It is written as any out-of-tree delegate would be: it sees the graph only
 * through the public API of wick.h (wick_delegate_graph_*, wick_tensor_*),
 * and its partitions compute on private buffers: at invoke it copies the
 * partition's inputs in, runs its nodes, and copies the partition's outputs
 * out. A tensor the runtime forgot to list as an output would therefore never
 * reach the CPU operators reading it, and the tests would see it.
 *
 * The accept set can be narrowed by op name, and faults injected: the first N
 * prepare_partition / invoke_partition calls fail (options, or the
 * environment variables WICK_REFERENCE_FAIL_PREPARE / _INVOKE read at
 * creation; counted over the delegate's life with atomics, so one delegate
 * may serve interpreters on several threads). Its results equal those of the
 * CPU with forced reference kernels (the same kernel functions on the same
 * values); the optimized CPU kernels differ from them by rounding only.
 */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/delegates.h"
#include "kernels/reference/reference.h"

enum ref_kind { K_NONE, K_BINARY, K_UNARY, K_FC, K_SOFTMAX, K_COPY };

typedef struct ref_op {
  const char *name;
  enum ref_kind kind;
  int code; /* a wick_binary_op or wick_unary_op */
} ref_op;

static const ref_op ref_ops[] = {
    {"ADD", K_BINARY, WICK_BINARY_ADD},
    {"SUB", K_BINARY, WICK_BINARY_SUB},
    {"MUL", K_BINARY, WICK_BINARY_MUL},
    {"DIV", K_BINARY, WICK_BINARY_DIV},
    {"MAXIMUM", K_BINARY, WICK_BINARY_MAXIMUM},
    {"MINIMUM", K_BINARY, WICK_BINARY_MINIMUM},
    {"RELU", K_UNARY, WICK_UNARY_RELU},
    {"RELU6", K_UNARY, WICK_UNARY_RELU6},
    {"RELU_N1_TO_1", K_UNARY, WICK_UNARY_RELU_N1_TO_1},
    {"LOGISTIC", K_UNARY, WICK_UNARY_LOGISTIC},
    {"TANH", K_UNARY, WICK_UNARY_TANH},
    {"HARD_SWISH", K_UNARY, WICK_UNARY_HARD_SWISH},
    {"ABS", K_UNARY, WICK_UNARY_ABS},
    {"NEG", K_UNARY, WICK_UNARY_NEG},
    {"EXP", K_UNARY, WICK_UNARY_EXP},
    {"SQRT", K_UNARY, WICK_UNARY_SQRT},
    {"RSQRT", K_UNARY, WICK_UNARY_RSQRT},
    {"FULLY_CONNECTED", K_FC, 0},
    {"SOFTMAX", K_SOFTMAX, 0},
    {"RESHAPE", K_COPY, 0},
    {"SQUEEZE", K_COPY, 0},
    {"EXPAND_DIMS", K_COPY, 0},
};
#define NUM_REF_OPS (sizeof ref_ops / sizeof ref_ops[0])

typedef struct ref_delegate {
  wick_delegate base; /* first: the callbacks get &base */
  bool accept[NUM_REF_OPS];
  atomic_int fail_prepare, fail_invoke; /* failures still to inject */
} ref_delegate;

static ref_delegate *self_of(wick_delegate *d) { return (ref_delegate *)(void *)d; }

static int find_op(const char *name) {
  for (size_t i = 0; name != NULL && i < NUM_REF_OPS; i++)
    if (strcmp(ref_ops[i].name, name) == 0) return (int)i;
  return -1;
}

/* Takes one injected failure when any is left. */
static bool take_failure(atomic_int *left) {
  int n = atomic_load(left);
  while (n > 0)
    if (atomic_compare_exchange_weak(left, &n, n - 1)) return true;
  return false;
}

/* ---------------------------------------------------------------- what it accepts */

static bool is_f32(const wick_tensor *t) {
  return t != NULL && wick_tensor_dtype(t) == WICK_DTYPE_FLOAT32 &&
         wick_tensor_quantization_count(t) == 0;
}

static int64_t elements(const wick_tensor *t) {
  int64_t n = 1;
  for (size_t d = 0; d < wick_tensor_rank(t); d++) n *= wick_tensor_dim(t, d);
  return n;
}

/* The clamp of a fused activation; false for one it does not run (TANH, SIGN_BIT). */
static bool activation_range(const wick_delegate_graph *g, size_t node, float *lo, float *hi) {
  double act = 0;
  *lo = -INFINITY;
  *hi = INFINITY;
  if (!wick_delegate_graph_node_option(g, node, WICK_OPTION_FUSED_ACTIVATION, &act)) return true;
  switch ((int)act) {
    case 0: return true;
    case 1: *lo = 0; return true;
    case 2: *lo = -1, *hi = 1; return true;
    case 3: *lo = 0, *hi = 6; return true;
    default: return false;
  }
}

#define DECLINE(...)                      \
  do {                                    \
    snprintf(why, why_size, __VA_ARGS__); \
    return 0;                             \
  } while (0)

static int ref_supports(wick_delegate *d, const wick_delegate_graph *g, size_t node, char *why,
                        size_t why_size) {
  ref_delegate *r = self_of(d);
  const char *name = wick_delegate_graph_node_name(g, node);
  int k = find_op(name);
  if (k < 0) DECLINE("op %s is not implemented", name ? name : "?");
  if (!r->accept[k]) DECLINE("op %s is not in the accept set", name);
  size_t nin = wick_delegate_graph_node_input_count(g, node);
  if (wick_delegate_graph_node_output_count(g, node) != 1)
    DECLINE("op %s with %zu outputs", name, wick_delegate_graph_node_output_count(g, node));
  const wick_tensor *out =
      wick_delegate_graph_tensor(g, wick_delegate_graph_node_output(g, node, 0));
  const wick_tensor *in0 =
      wick_delegate_graph_tensor(g, wick_delegate_graph_node_input(g, node, 0));
  if (in0 == NULL || out == NULL) DECLINE("op %s without input 0", name);
  float lo, hi;
  switch (ref_ops[k].kind) {
    case K_COPY:
      if (wick_dtype_size(wick_tensor_dtype(out)) == 0 ||
          wick_tensor_byte_size(in0) != wick_tensor_byte_size(out))
        DECLINE("type %s (fixed-size types only)", wick_dtype_name(wick_tensor_dtype(out)));
      return 1;
    case K_BINARY: {
      const wick_tensor *in1 =
          nin > 1 ? wick_delegate_graph_tensor(g, wick_delegate_graph_node_input(g, node, 1))
                  : NULL;
      if (nin != 2 || in1 == NULL) DECLINE("op %s with %zu inputs", name, nin);
      if (!is_f32(in0) || !is_f32(in1) || !is_f32(out))
        DECLINE("type %s (float32 only)", wick_dtype_name(wick_tensor_dtype(in0)));
      if (!activation_range(g, node, &lo, &hi)) DECLINE("fused activation (clamps only)");
      size_t rank = wick_tensor_rank(out);
      if (wick_tensor_rank(in0) > rank || wick_tensor_rank(in1) > rank)
        DECLINE("shape: operand of higher rank than the output");
      return 1;
    }
    case K_UNARY:
    case K_SOFTMAX:
      if (!is_f32(in0) || !is_f32(out))
        DECLINE("type %s (float32 only)", wick_dtype_name(wick_tensor_dtype(in0)));
      if (elements(in0) != elements(out)) DECLINE("shape: input and output sizes differ");
      if (ref_ops[k].kind == K_SOFTMAX && wick_tensor_rank(in0) == 0) DECLINE("shape: rank 0");
      return 1;
    case K_FC: {
      double format = 0;
      wick_delegate_graph_node_option(g, node, WICK_OPTION_WEIGHTS_FORMAT, &format);
      const wick_tensor *w =
          nin > 1 ? wick_delegate_graph_tensor(g, wick_delegate_graph_node_input(g, node, 1))
                  : NULL;
      const wick_tensor *b =
          nin > 2 ? wick_delegate_graph_tensor(g, wick_delegate_graph_node_input(g, node, 2))
                  : NULL;
      if (w == NULL || !is_f32(in0) || !is_f32(w) || !is_f32(out) || (b != NULL && !is_f32(b)))
        DECLINE("type (float32 input, weights and bias only)");
      if (format != 0) DECLINE("weights format %d", (int)format);
      if (!activation_range(g, node, &lo, &hi)) DECLINE("fused activation (clamps only)");
      if (wick_tensor_rank(w) != 2) DECLINE("shape: weights of rank %zu", wick_tensor_rank(w));
      int64_t n = wick_tensor_dim(w, 0), kk = wick_tensor_dim(w, 1);
      if (kk <= 0 || elements(in0) % kk != 0 || elements(out) != elements(in0) / kk * n ||
          (b != NULL && elements(b) != n))
        DECLINE("shape: input, weights and output do not agree");
      return 1;
    }
    default: DECLINE("op %s", name);
  }
}

/* ---------------------------------------------------------------- partitions */

typedef struct ref_partition {
  const wick_delegate_partition *desc;
  void **buf; /* per graph tensor: its private copy, or NULL (constants: read in place) */
} ref_partition;

static wick_status ref_prepare(wick_delegate *d, const wick_delegate_graph *g,
                               const wick_delegate_partition *part, void **state_out, char *why,
                               size_t why_size) {
  ref_delegate *r = self_of(d);
  *state_out = NULL;
  if (take_failure(&r->fail_prepare)) {
    snprintf(why, why_size, "injected failure (fail_prepare)");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  size_t nt = wick_delegate_graph_tensor_count(g);
  ref_partition *p = wick_delegate_graph_alloc(g, sizeof *p);
  void **buf = wick_delegate_graph_alloc(g, (nt ? nt : 1) * sizeof(void *));
  if (p == NULL || buf == NULL) {
    snprintf(why, why_size, "out of memory (private buffers)");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  p->desc = part;
  p->buf = buf;
  /* A private buffer for every input and every tensor a node of it writes. */
  for (size_t i = 0; i < part->num_inputs + part->num_nodes; i++) {
    size_t count = 1;
    if (i >= part->num_inputs)
      count = wick_delegate_graph_node_output_count(g, part->nodes[i - part->num_inputs]);
    for (size_t k = 0; k < count; k++) {
      int32_t t = i < part->num_inputs
                      ? part->inputs[i]
                      : wick_delegate_graph_node_output(g, part->nodes[i - part->num_inputs], k);
      const wick_tensor *x = wick_delegate_graph_tensor(g, t);
      if (x == NULL || buf[t] != NULL) continue;
      buf[t] =
          wick_delegate_graph_alloc(g, wick_tensor_byte_size(x) ? wick_tensor_byte_size(x) : 1);
      if (buf[t] == NULL) {
        snprintf(why, why_size, "out of memory (private buffers)");
        return WICK_ERR_OUT_OF_MEMORY;
      }
    }
  }
  *state_out = p;
  return WICK_OK;
}

/* The bytes of tensor t as the partition sees them: its private copy, or a constant. */
static const void *src(const ref_partition *p, const wick_delegate_graph *g, int32_t t) {
  if (t < 0) return NULL;
  return p->buf[t] != NULL ? p->buf[t] : wick_tensor_data(wick_delegate_graph_tensor(g, t));
}

/* Numpy broadcasting of `in` into an output of `rank`: element strides, 0 on broadcast dims. */
static void strides_in(const wick_tensor *in, int32_t rank, int64_t *strides) {
  int32_t r = (int32_t)wick_tensor_rank(in);
  int64_t step = 1;
  for (int32_t d = rank - 1; d >= 0; d--) {
    int32_t id = d - (rank - r);
    int32_t dim = id >= 0 ? wick_tensor_dim(in, (size_t)id) : 1;
    strides[d] = dim == 1 ? 0 : step;
    step *= dim;
  }
}

static void run_node(const ref_partition *p, const wick_delegate_graph *g, size_t node) {
  int k = find_op(wick_delegate_graph_node_name(g, node));
  int32_t out_t = wick_delegate_graph_node_output(g, node, 0);
  const wick_tensor *out = wick_delegate_graph_tensor(g, out_t);
  const wick_tensor *in0 =
      wick_delegate_graph_tensor(g, wick_delegate_graph_node_input(g, node, 0));
  void *o = p->buf[out_t];
  const void *a = src(p, g, wick_delegate_graph_node_input(g, node, 0));
  float lo, hi;
  activation_range(g, node, &lo, &hi);
  switch (ref_ops[k].kind) {
    case K_COPY: memcpy(o, a, wick_tensor_byte_size(out)); break;
    case K_UNARY: wick_f32_unary__reference(ref_ops[k].code, elements(in0), a, o); break;
    case K_SOFTMAX: {
      double beta = 1;
      wick_delegate_graph_node_option(g, node, WICK_OPTION_BETA, &beta);
      int64_t cols = wick_tensor_dim(in0, wick_tensor_rank(in0) - 1);
      int64_t rows = cols ? elements(in0) / cols : 0;
      wick_f32_softmax__reference(rows, cols, (float)beta, a, o);
      break;
    }
    case K_BINARY: {
      int32_t b_t = wick_delegate_graph_node_input(g, node, 1);
      wick_broadcast bc;
      memset(&bc, 0, sizeof bc);
      bc.rank = (int32_t)wick_tensor_rank(out);
      for (int32_t d = 0; d < bc.rank; d++) bc.dims[d] = wick_tensor_dim(out, (size_t)d);
      strides_in(in0, bc.rank, bc.a_strides);
      strides_in(wick_delegate_graph_tensor(g, b_t), bc.rank, bc.b_strides);
      wick_f32_binary__reference(ref_ops[k].code, &bc, a, src(p, g, b_t), o, lo, hi);
      break;
    }
    case K_FC: {
      int32_t w_t = wick_delegate_graph_node_input(g, node, 1);
      int32_t b_t = wick_delegate_graph_node_input_count(g, node) > 2
                        ? wick_delegate_graph_node_input(g, node, 2)
                        : -1;
      const wick_tensor *w = wick_delegate_graph_tensor(g, w_t);
      int64_t n = wick_tensor_dim(w, 0), kk = wick_tensor_dim(w, 1);
      wick_f32_fully_connected__reference(elements(in0) / kk, n, kk, a, src(p, g, w_t),
                                          src(p, g, b_t), o, lo, hi);
      break;
    }
    default: break;
  }
}

static wick_status ref_invoke(wick_delegate *d, const wick_delegate_graph *g, void *state,
                              char *why, size_t why_size) {
  ref_delegate *r = self_of(d);
  ref_partition *p = state;
  if (take_failure(&r->fail_invoke)) {
    snprintf(why, why_size, "injected failure (fail_invoke)");
    return WICK_ERR_INVALID_INPUT;
  }
  const wick_delegate_partition *part = p->desc;
  for (size_t i = 0; i < part->num_inputs; i++) {
    const wick_tensor *x = wick_delegate_graph_tensor(g, part->inputs[i]);
    memcpy(p->buf[part->inputs[i]], wick_tensor_data(x), wick_tensor_byte_size(x));
  }
  for (size_t i = 0; i < part->num_nodes; i++) {
    if (wick_delegate_graph_cancelled(g)) {
      snprintf(why, why_size, "cancelled");
      return WICK_ERR_CANCELLED;
    }
    run_node(p, g, part->nodes[i]);
  }
  for (size_t i = 0; i < part->num_outputs; i++) {
    wick_tensor *x = wick_delegate_graph_tensor(g, part->outputs[i]);
    void *dst = wick_tensor_mutable_data(x);
    if (dst == NULL) {
      snprintf(why, why_size, "output tensor %d has no storage", part->outputs[i]);
      return WICK_ERR_INVALID_ARGUMENT;
    }
    memcpy(dst, p->buf[part->outputs[i]], wick_tensor_byte_size(x));
  }
  return WICK_OK;
}

static void ref_free_partition(wick_delegate *d, void *state) {
  (void)d;
  (void)state; /* everything came from wick_delegate_graph_alloc */
}

static void ref_destroy(wick_delegate *d) { free(self_of(d)); }

/* ---------------------------------------------------------------- construction */

wick_reference_delegate_options wick_reference_delegate_options_default(void) {
  wick_reference_delegate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  return o;
}

static int env_count(const char *name) {
  const char *v = getenv(name);
  if (v == NULL || v[0] == 0) return 0;
  long n = strtol(v, NULL, 10);
  return n < 0 ? 0 : n > 1000000 ? 1000000 : (int)n;
}

wick_status wick_reference_delegate_create(const wick_reference_delegate_options *options,
                                           wick_error_info *error, wick_delegate **delegate_out) {
  if (error) error->message[0] = 0;
  if (delegate_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *delegate_out = NULL;
  wick_reference_delegate_options o = wick_reference_delegate_options_default();
  if (options != NULL) {
    /* the first version runs through min_partition_nodes; later fields keep defaults */
    if (options->struct_size <
        offsetof(wick_reference_delegate_options, min_partition_nodes) + sizeof(size_t)) {
      if (error)
        snprintf(error->message, sizeof error->message,
                 "wick_reference_delegate_options.struct_size is %zu: take the options from "
                 "wick_reference_delegate_options_default()",
                 options->struct_size);
      return WICK_ERR_INVALID_ARGUMENT;
    }
    memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
  }
  ref_delegate *r = calloc(1, sizeof *r);
  if (r == NULL) {
    if (error) snprintf(error->message, sizeof error->message, "out of memory");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < NUM_REF_OPS; i++) r->accept[i] = o.ops == NULL;
  for (const char *s = o.ops; s != NULL && *s;) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char name[32];
    int k = -1;
    if (len > 0 && len < sizeof name) {
      memcpy(name, s, len);
      name[len] = 0;
      k = find_op(name);
    }
    if (k < 0 && len > 0) {
      if (error)
        snprintf(error->message, sizeof error->message,
                 "the reference delegate does not implement op \"%.*s\" (it runs ADD SUB MUL DIV "
                 "MAXIMUM MINIMUM RELU RELU6 RELU_N1_TO_1 LOGISTIC TANH HARD_SWISH ABS NEG EXP "
                 "SQRT RSQRT FULLY_CONNECTED SOFTMAX RESHAPE SQUEEZE EXPAND_DIMS)",
                 (int)(len < 64 ? len : 64), s);
      free(r);
      return WICK_ERR_INVALID_ARGUMENT;
    }
    if (k >= 0) r->accept[k] = true;
    s = end ? end + 1 : s + len;
  }
  atomic_init(&r->fail_prepare, o.fail_prepare + env_count("WICK_REFERENCE_FAIL_PREPARE"));
  atomic_init(&r->fail_invoke, o.fail_invoke + env_count("WICK_REFERENCE_FAIL_INVOKE"));
  r->base.struct_size = sizeof r->base;
  r->base.name = "reference";
  r->base.user = r;
  r->base.min_partition_nodes = o.min_partition_nodes;
  r->base.supports_node = ref_supports;
  r->base.prepare_partition = ref_prepare;
  r->base.invoke_partition = ref_invoke;
  r->base.free_partition = ref_free_partition;
  r->base.destroy = ref_destroy;
  *delegate_out = &r->base;
  return WICK_OK;
}
