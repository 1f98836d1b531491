/*
 * fuse.c — graph-level fusion at prepare: operators whose only input is the
 * fresh output of a CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED node are
 * folded into that node's epilogue, so their tensor is never written to
 * memory and read back; and a PAD in front of a convolution is folded into
 * the convolution's own padding.
 *
 * Epilogue patterns (P = the producer, t = its output 0):
 *
 *   P -> LOGISTIC(t) = s -> MUL(t, s)      SiLU / swish (either MUL order)
 *   P -> HARD_SWISH | LOGISTIC | TANH | GELU | RELU | RELU6 | RELU_N1_TO_1
 *        | RELU_0_TO_1                     one activation
 *   P -> ADD(t, r), r the same shape       residual add (+ ADD's clamp), when
 *                                          r is computed before P runs
 *   any of these (or P alone) -> PRELU(x, alpha), alpha a constant with one
 *        value per channel (the last dimension) or one value for a single
 *        channel: last in the epilogue, x >= 0 ? x : x * alpha, as the PRELU
 *        kernel computes it (bit-identical)
 *
 * A pattern applies only when every intermediate tensor (t, s) has no other
 * reader, is not a graph output and not a variable, every node involved is
 * float32 (no quantization), prepared statically (not dynamic, not folded)
 * and the whole chain has the producer's shape. Which ops play each part is read from their
 * records (src/core/op_api.h): a producer is an op flagged WICK_OP_TAKES_EPILOGUE (CONV_2D,
 * DEPTHWISE_CONV_2D, FULLY_CONNECTED), "one activation" an op whose record names the vectorized
 * kernel it equals (WICK_OP_EPILOGUE: HARD_SWISH ... RELU_0_TO_1 in unary_ops.inc, GELU with
 * its approximate form), the residual add WICK_OP_EPILOGUE_RESIDUAL (ADD), the last step
 * WICK_OP_EPILOGUE_PRELU (PRELU); only the two-node SiLU pattern names its ops (LOGISTIC, MUL),
 * as do the multi-node rewrites below (GELU pieces, layer norm, PAD folding). The producer's output
 * 0 is redirected to the last fused node's output (wick_node.fusion), the fused nodes are skipped
 * at invoke, and plan.c gives the dead intermediates no storage. The producer ops
 * (src/ops/conv_2d.c, fully_connected.c) apply the epilogue per output row or tile while it is in
 * cache.
 *
 * Per-channel affine (last, after the layer norms; fuse_channel_affine):
 *
 *   MUL(x, s) = t -> ADD(t, b) = y [RELU | RELU6 | RELU_N1_TO_1]   (either operand order)
 *
 * with s and b constant float tensors of one value per channel (x's last dimension; [C] or
 * [1, ..., 1, C]) — TensorFlow's BatchNormalization where it did not fold into a convolution
 * (DenseNet after each CONCATENATION, ResNet50V2's pre-activations) — runs in the MUL node as
 * one pass (src/ops/fused.c): per block of rows the MUL kernel, then the ADD kernel with its
 * clamp on the block while it is in L1, the same operations on the same operands in the same
 * order as the two nodes, so bit-identical to them; t gets no storage. t must be private and
 * of x's shape, neither node may run elsewhere (a delegate's), MUL without an activation.
 *
 * A binary op and a clamp (after all of the above; fuse_binary_clamp):
 *
 *   ADD | SUB | MUL | DIV (float, no activation) = t -> RELU | RELU6 | RELU_N1_TO_1 | RELU_0_TO_1
 *
 * with t private: the activation's bounds become the binary op's clamp (its kernels clamp
 * every result as min(hi, max(lo, x)), as the activation kernels compute it), the activation
 * node is skipped; bit-identical. BlazeFace's residual ADDs whose other operand is produced
 * after the convolution (so not an epilogue) then a RELU.
 *
 * Decomposed tanh-form GELU (after the epilogues): 0.5 x (1 + tanh(sqrt(2/pi)
 * (x + 0.044715 x^3))) as MUL / POW / SQUARE / ADD / TANH nodes, the constant
 * factors and powers of x grouped in any way (fuse_gelu_tanh; constants
 * within 1e-6 relative), every intermediate private and of x's shape, runs
 * as the vectorized GELU_TANH — in the epilogue of x's producer (CONV_2D,
 * DEPTHWISE_CONV_2D, FULLY_CONNECTED) when only the chain reads x, else in
 * the chain's first node (wick_node_fusion.unary). Not bit-identical to the
 * chain: within GELU_TANH's bound (src/kernels/template/elementwise.h).
 *
 * Layer normalization (after the epilogues): a MEAN over trailing axes that
 * starts one of the two decompositions of wick_norm_fusion (src/core/internal.h:
 * wick's converter's CENTERED form, TensorFlow's SCALED form) runs the whole
 * chain as one kernel (src/ops/fused.c), bit-identical to the unfused
 * nodes. Every intermediate must be private (one reader, or the slots the
 * pattern itself reads), eps a one-element constant, gamma and beta
 * constants with one value per row element (else the chain ends before
 * them; the SCALED form then does not fuse), no node with an activation.
 * The MEAN's output is redirected to the chain's result and it gets one
 * row of scratch per thread.
 *
 * Attention over a key/value cache (after the epilogues; fuse_attention):
 *
 *   BATCH_MATMUL(q, kt) = s [-> MUL | DIV by a one-element constant, a vectorized unary
 *   (TANH)]* (at most 4: Gemma 2's soft-capping) -> ADD(., mask) -> SOFTMAX -> BATCH_MATMUL(., v)
 *
 * with RESHAPE-like nodes that keep rows of S anywhere between the two BATCH_MATMULs and in
 * front of v (wick.llm's attention core, python/wick/llm/attention.py, as wick's converter
 * writes it: 3-d matmuls between 4-d views) runs as one kernel in the first
 * BATCH_MATMUL (src/ops/attention.c) over the key positions the mask leaves visible: a decode
 * step costs the filled part of the cache, not all of it, bit-identical to the unfused nodes
 * (src/kernels/attention.c says why). Float32 throughout, every intermediate private, no
 * adjoint operands, q and kt with the same batch dims, the second BATCH_MATMUL on the first's
 * rows (batch count and M) without broadcast, the mask's dims 1 or those of the view the ADD
 * sees (its last S), SOFTMAX's beta in [2^-100, 2^100], the values (through their RESHAPEs) and
 * the mask written before the first BATCH_MATMUL runs, and no node between the two
 * BATCH_MATMULs that assigns a variable or runs a subgraph. WICK_NO_ATTENTION_FUSION=1 (read when
 * an interpreter is created) turns this one pattern off, for bit-exact comparisons with the unfused
 * nodes.
 *
 * 8-bit swish (after the epilogues; fuse_q8_swish):
 *
 *   x -> LOGISTIC(x) = s -> MUL(x, s) (either order)    int8 or uint8, one type and shape
 *
 * with s read by the MUL alone runs in the LOGISTIC node as one table over x's 256 values: the
 * MUL's reference answers for x times its sigmoid (src/ops/activations_quantized.c,
 * wick_q8_swish_invoke), so bit-identical to the two nodes; the MUL is skipped. (EfficientNet's
 * and the other Keras swish blocks, converted by TensorFlow with full-integer quantization.)
 *
 * PAD folding (before the convolution's prepare, wick_pad_folder_*):
 *
 *   x -> PAD | PADV2 = t -> CONV_2D | DEPTHWISE_CONV_2D | MAX_POOL_2D(t, ...)
 *
 * when t has no other reader, is not a graph output or variable, the
 * paddings are constant, pad only H and W of an NHWC tensor, and the fill is
 * what the consumer's implicit padding means: for a convolution zero for
 * float (PADV2: +0.0, not -0.0), the zero point for quantized tensors (x and
 * t quantized alike) — every convolution kernel (float, hybrid,
 * int8/uint8/int16; reference, vectorized, VNNI) treats a tap outside the
 * input as that value; for MAX_POOL_2D -inf or the type's minimum, which its
 * kernels start the maximum from while skipping outside taps (a NaN never
 * enters the maximum, so the order of taps does not matter). The consumer
 * reads x with the PAD's counts added to its own padding (wick_conv_spatial,
 * wick_pool_spatial in src/ops/op_common.c) and computes the same values;
 * the PAD is skipped and t gets no storage. AVERAGE_POOL_2D is not folded:
 * it divides by the count of in-bounds taps, which explicit padding changes.
 *
 * Runs only when optimized kernels are in use (the vectorized activations do
 * the epilogue): forcing the reference kernels disables fusion, which is how
 * tests compare fused against unfused results; WICK_NO_FUSION=1 disables it
 * with the optimized kernels still on (bit-exact comparisons).
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "format/schema.h"
#include "kernels/kernels.h"

typedef struct fuse_ctx {
  wick_graph *g;
  uint32_t *readers;  /* per tensor: input slots of live nodes reading it */
  int32_t *producer;  /* per tensor: node index writing it, -1: none (input/constant) */
  bool *graph_output; /* per tensor */
} fuse_ctx;

/* A node fusion may touch: it runs at invoke on the CPU (a delegate's node keeps its own
 * form, which its CPU fallback runs). */
static bool live(const wick_node *n) {
  return !n->folded && !n->dynamic && !n->fused && n->partition < 0;
}

static bool plain_f32(const wick_tensor *t) {
  return t->type == WICK_DTYPE_FLOAT32 && (t->info == NULL || t->info->quant.count == 0) &&
         !(t->info && t->info->is_variable);
}

static bool same_shape(const wick_tensor *a, const wick_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* An intermediate the chain may drop: one reader (or `readers`), not an
 * output, plain float. */
static bool private_tensor(const fuse_ctx *f, int32_t t, uint32_t readers) {
  return t >= 0 && f->readers[t] == readers && !f->graph_output[t] && plain_f32(&f->g->tensors[t]);
}

/* The single live node (after `from`) reading tensor t, or NULL. */
static wick_node *reader_of(const fuse_ctx *f, int32_t t, uint32_t from, wick_node *except) {
  for (uint32_t i = from + 1; i < f->g->info->num_operators; i++) {
    wick_node *n = &f->g->nodes[i];
    if (n == except || n->folded) continue;
    for (uint32_t k = 0; k < n->op->num_inputs; k++)
      if (n->op->inputs[k] == t) return n;
  }
  return NULL;
}

/* The epilogue activation node n computes, as its op record says (WICK_OP_EPILOGUE), or -1. */
static int activation_kind(const wick_node *n) {
  return wick_op_epilogue_kind(n->def, &n->op->params);
}

/* A one-input, one-output node reading t: its output, or -1. */
static int32_t unary_output(const fuse_ctx *f, const wick_node *n, int32_t t) {
  if (!live(n) || n->op->num_inputs != 1 || n->op->num_outputs != 1 || n->op->inputs[0] != t)
    return -1;
  int32_t o = n->op->outputs[0];
  const wick_tensor *ot = &f->g->tensors[o];
  if (!plain_f32(ot) || !same_shape(ot, &f->g->tensors[t])) return -1;
  return o;
}

static float act_bound(const wick_node *n, bool upper) {
  switch (n->op->params.activation) {
    case WICK_ACT_RELU: return upper ? INFINITY : 0.0f;
    case WICK_ACT_RELU_N1_TO_1: return upper ? 1.0f : -1.0f;
    case WICK_ACT_RELU6: return upper ? 6.0f : 0.0f;
    default: return upper ? INFINITY : -INFINITY;
  }
}

static bool plain_activation(const wick_node *n) {
  wick_activation a = n->op->params.activation;
  return a == WICK_ACT_NONE || a == WICK_ACT_RELU || a == WICK_ACT_RELU_N1_TO_1 ||
         a == WICK_ACT_RELU6;
}

static void redirect(wick_node *p, int32_t output) {
  p->fusion.redirected = true;
  p->fusion.output = output;
}

/* After P's epilogue so far (its output now x): x's sole reader a PRELU whose alpha is a
 * constant row of x's channels (the last dimension) joins the epilogue. */
static void fuse_prelu(fuse_ctx *f, wick_node *p, int32_t x) {
  if (!private_tensor(f, x, 1)) return;
  wick_node *a = reader_of(f, x, (uint32_t)(p - f->g->nodes), NULL);
  if (a == NULL || !live(a) || !wick_op_has(a->def, WICK_OP_EPILOGUE_PRELU) ||
      a->op->num_inputs != 2 || a->op->num_outputs != 1 || a->op->inputs[0] != x)
    return;
  const int32_t al = a->op->inputs[1], o = a->op->outputs[0];
  const wick_tensor *xt = &f->g->tensors[x];
  if (al < 0 || al == x || xt->rank < 1) return;
  const wick_tensor *at = &f->g->tensors[al], *ot = &f->g->tensors[o];
  if (!plain_f32(at) || !at->known || at->data == NULL || !plain_f32(ot) || !same_shape(ot, xt))
    return;
  /* alpha [1, ..., 1, C] with C the channels of x (rank at most x's) */
  const int32_t channels = xt->dims[xt->rank - 1];
  if (at->rank < 1 || at->rank > xt->rank || at->dims[at->rank - 1] != channels) return;
  for (int32_t i = 0; i + 1 < at->rank; i++)
    if (at->dims[i] != 1) return;
  p->fusion.prelu = 1 + al;
  redirect(p, o);
  a->fused = true;
}

static void fuse_producer(fuse_ctx *f, uint32_t pi) {
  wick_node *p = &f->g->nodes[pi];
  int32_t t = p->op->outputs[0];
  if (!private_tensor(f, t, f->readers[t]) || f->readers[t] == 0 || f->readers[t] > 2) return;
  wick_node *a = reader_of(f, t, pi, NULL);
  if (a == NULL || !live(a)) return;
  if (wick_op_has(a->def, WICK_OP_EPILOGUE_PRELU)) {
    fuse_prelu(f, p, t);
    return;
  }
  if (f->readers[t] == 2) {
    /* SiLU: LOGISTIC(t) = s and MUL(t, s) */
    wick_node *b = reader_of(f, t, (uint32_t)(a - f->g->nodes), NULL);
    if (b == NULL || !live(b) || a->op->builtin != WICK_BUILTIN_LOGISTIC ||
        b->op->builtin != WICK_BUILTIN_MUL || b->op->num_inputs != 2 ||
        b->op->params.activation != WICK_ACT_NONE)
      return;
    int32_t s = unary_output(f, a, t);
    if (s < 0 || !private_tensor(f, s, 1)) return;
    const int32_t *in = b->op->inputs;
    if (!((in[0] == t && in[1] == s) || (in[0] == s && in[1] == t))) return;
    int32_t o = b->op->outputs[0];
    if (!plain_f32(&f->g->tensors[o]) || !same_shape(&f->g->tensors[o], &f->g->tensors[t])) return;
    p->fusion.activation = 1 + WICK_F32_SILU;
    redirect(p, o);
    a->fused = b->fused = true;
    fuse_prelu(f, p, o);
    return;
  }
  int kind = activation_kind(a);
  if (kind >= 0) {
    int32_t o = unary_output(f, a, t);
    if (o < 0) return;
    p->fusion.activation = 1 + kind;
    redirect(p, o);
    a->fused = true;
    fuse_prelu(f, p, o);
    return;
  }
  if (wick_op_has(a->def, WICK_OP_EPILOGUE_RESIDUAL) && a->op->num_inputs == 2 &&
      plain_activation(a)) {
    const int32_t *in = a->op->inputs;
    int32_t r = in[0] == t ? in[1] : in[0];
    if (r < 0 || r == t || (in[0] != t && in[1] != t)) return;
    const wick_tensor *rt = &f->g->tensors[r], *tt = &f->g->tensors[t];
    int32_t o = a->op->outputs[0];
    if (!plain_f32(rt) || !same_shape(rt, tt) || !plain_f32(&f->g->tensors[o]) ||
        !same_shape(&f->g->tensors[o], tt))
      return;
    /* r must exist when P runs: an input, a constant, or written earlier (in the
     * execution order, which delegate partitions may change) */
    if (f->producer[r] >= 0 &&
        wick_graph_position(f->g, (uint32_t)f->producer[r]) >= wick_graph_position(f->g, pi))
      return;
    p->fusion.residual = 1 + r;
    p->fusion.lo = act_bound(a, false);
    p->fusion.hi = act_bound(a, true);
    redirect(p, o);
    a->fused = true;
    fuse_prelu(f, p, o);
  }
}

/* ---------------------------------------------------------------- 8-bit swish */

/* An 8-bit activation quantized with one scale and zero point, not a variable. */
static bool plain_q8(const wick_tensor *t) {
  return (t->type == WICK_DTYPE_INT8 || t->type == WICK_DTYPE_UINT8) && t->info != NULL &&
         t->info->quant.count == 1 && !t->info->is_variable;
}

/* x -> LOGISTIC = s -> MUL(x, s) or MUL(s, x), all 8-bit of one type and x's shape, s read by
 * the MUL alone and not a graph output: the LOGISTIC node runs the whole swish as one table of
 * the MUL's answers for x's 256 values (src/ops/activations_quantized.c; bit-exact: the table is
 * the two nodes' own arithmetic) and writes the MUL's output; the MUL is skipped and s gets no
 * storage. */
static void fuse_q8_swish(fuse_ctx *f, wick_node *lg) {
  const int32_t x = lg->op->inputs[0], s = lg->op->outputs[0];
  if (x < 0 || s < 0 || x == s || f->readers[s] != 1 || f->graph_output[s]) return;
  const wick_tensor *xt = &f->g->tensors[x], *st = &f->g->tensors[s];
  if (!plain_q8(xt) || !plain_q8(st) || st->type != xt->type || !same_shape(st, xt)) return;
  wick_node *m = reader_of(f, s, (uint32_t)(lg - f->g->nodes), NULL);
  if (m == NULL || !live(m) || m->child[0] != NULL || m->op->builtin != WICK_BUILTIN_MUL ||
      m->op->num_inputs != 2 || m->op->num_outputs != 1)
    return;
  const int32_t *in = m->op->inputs, o = m->op->outputs[0];
  if (!((in[0] == x && in[1] == s) || (in[0] == s && in[1] == x)) || o < 0) return;
  const wick_tensor *ot = &f->g->tensors[o];
  if (!plain_q8(ot) || ot->type != xt->type || !same_shape(ot, xt)) return;
  lg->fusion.q8_swish = 1 + (int32_t)m->op->params.activation;
  lg->fusion.q8_swish_sigmoid = s;
  lg->fusion.q8_swish_sigmoid_first = in[0] == s;
  redirect(lg, o);
  m->fused = true;
}

/* ---------------------------------------------------------------- layer norm */

/* A live float node of `builtin` with one output, no fused activation, one
 * input per operand (`arity`), reading t; NULL otherwise. */
static wick_node *op_reading(wick_node *n, int32_t builtin, uint32_t arity, int32_t t) {
  if (n == NULL || !live(n) || n->op->builtin != builtin || n->op->num_inputs != arity ||
      n->op->num_outputs != 1 || n->op->params.activation != WICK_ACT_NONE)
    return NULL;
  for (uint32_t k = 0; k < arity; k++)
    if (n->op->inputs[k] == t) return n;
  return NULL;
}

/* The node of `builtin` that is the only reader of the private tensor t. */
static wick_node *sole_reader(const fuse_ctx *f, int32_t t, int32_t builtin, uint32_t arity) {
  if (!private_tensor(f, t, 1) || f->producer[t] < 0) return NULL;
  return op_reading(reader_of(f, t, (uint32_t)f->producer[t], NULL), builtin, arity, t);
}

/* The two nodes reading the private tensor t (two input slots, two nodes). */
static bool two_readers(const fuse_ctx *f, int32_t t, wick_node **a, wick_node **b) {
  if (!private_tensor(f, t, 2) || f->producer[t] < 0) return false;
  *a = reader_of(f, t, (uint32_t)f->producer[t], NULL);
  *b = *a ? reader_of(f, t, (uint32_t)(*a - f->g->nodes), NULL) : NULL;
  return *b != NULL;
}

/* The other operand of a binary node reading t (t itself for t op t). */
static int32_t other_input(const wick_node *n, int32_t t) {
  return n->op->inputs[0] == t ? n->op->inputs[1] : n->op->inputs[0];
}

static bool reads_pair(const wick_node *n, int32_t a, int32_t b) {
  const int32_t *in = n->op->inputs;
  return (in[0] == a && in[1] == b) || (in[0] == b && in[1] == a);
}

static int32_t out0(const wick_node *n) { return n->op->outputs[0]; }

/* n's output is plain float with the shape of tensor `like`. */
static bool out_like(const fuse_ctx *f, const wick_node *n, int32_t like) {
  const wick_tensor *o = &f->g->tensors[out0(n)];
  return plain_f32(o) && same_shape(o, &f->g->tensors[like]);
}

/* MEAN(x) with kept dims over a trailing run of axes: the elements per row. */
static size_t trailing_mean_inner(const wick_tensor *x, const wick_tensor *m, int32_t *split) {
  if (m->rank != x->rank || x->rank < 1) return 0;
  int32_t s = x->rank;
  while (s > 0 && m->dims[s - 1] == 1) s--;
  for (int32_t d = 0; d < s; d++)
    if (m->dims[d] != x->dims[d]) return 0;
  size_t inner = 1;
  for (int32_t d = s; d < x->rank; d++) inner *= (size_t)x->dims[d];
  *split = s;
  return inner;
}

/* A constant float tensor holding one value per element of x's rows (x's
 * dims from `split` on, leading dims 1). */
static bool row_constant(const fuse_ctx *f, int32_t c, const wick_tensor *x, int32_t split,
                         size_t inner) {
  if (c < 0) return false;
  const wick_tensor *t = &f->g->tensors[c];
  if (!plain_f32(t) || !t->known || t->data == NULL || t->rank > x->rank ||
      (size_t)wick_tensor_elements(t) != inner)
    return false;
  for (int32_t i = 0; i < t->rank; i++) {
    int32_t d = x->rank - t->rank + i;
    if (t->dims[i] != (d >= split ? x->dims[d] : 1)) return false;
  }
  return true;
}

/* The fused chain: its nodes after the starting MEAN, and the result. */
typedef struct norm_chain {
  wick_node *nodes[12];
  int count;
  wick_norm_fusion norm;
} norm_chain;

static wick_node *take(norm_chain *c, wick_node *n) {
  if (n != NULL && c->count < (int)(sizeof c->nodes / sizeof c->nodes[0])) c->nodes[c->count++] = n;
  return n;
}

/* sq (private, x's shape) -> MEAN -> ADD eps -> RSQRT: the rsqrt tensor, or
 * -1. The MEAN reduces what the first one did (same shapes in and out). */
static int32_t variance_rsqrt(const fuse_ctx *f, norm_chain *c, int32_t sq, int32_t mu) {
  wick_node *v = take(c, sole_reader(f, sq, WICK_BUILTIN_MEAN, 2));
  if (v == NULL || v->op->inputs[0] != sq || !out_like(f, v, mu)) return -1;
  wick_node *e = take(c, sole_reader(f, out0(v), WICK_BUILTIN_ADD, 2));
  if (e == NULL || !out_like(f, e, mu)) return -1;
  int32_t eps = other_input(e, out0(v));
  const wick_tensor *et = eps >= 0 ? &f->g->tensors[eps] : NULL;
  if (et == NULL || !plain_f32(et) || !et->known || et->data == NULL ||
      wick_tensor_elements(et) != 1)
    return -1;
  memcpy(&c->norm.eps, et->data, sizeof c->norm.eps);
  wick_node *r = take(c, sole_reader(f, out0(e), WICK_BUILTIN_RSQRT, 1));
  return r != NULL && out_like(f, r, mu) ? out0(r) : -1;
}

/* The optional `builtin` (MUL gamma / ADD beta) with a row constant after
 * private t: its node (constant in *constant), else NULL. */
static wick_node *row_affine(const fuse_ctx *f, int32_t t, int32_t builtin, int32_t x,
                             int32_t split, size_t inner, int32_t *constant) {
  wick_node *n = sole_reader(f, t, builtin, 2);
  if (n == NULL || !out_like(f, n, x)) return NULL;
  int32_t k = other_input(n, t);
  if (!row_constant(f, k, &f->g->tensors[x], split, inner)) return NULL;
  *constant = k;
  return n;
}

/* wick's converter (torch LayerNorm): d = SUB(x, mu); MUL(d, d) -> MEAN ->
 * ADD eps -> RSQRT = r; MUL(d, r) [-> MUL gamma] [-> ADD beta]. */
static int32_t match_centered(const fuse_ctx *f, norm_chain *c, int32_t x, int32_t mu,
                              int32_t split) {
  wick_node *sub = take(c, sole_reader(f, mu, WICK_BUILTIN_SUB, 2));
  if (sub == NULL || sub->op->inputs[0] != x || sub->op->inputs[1] != mu || !out_like(f, sub, x))
    return -1;
  int32_t d = out0(sub);
  /* d: read twice by MUL(d, d), once by MUL(d, r) */
  if (!private_tensor(f, d, 3)) return -1;
  wick_node *sq = take(c, op_reading(reader_of(f, d, (uint32_t)(sub - f->g->nodes), NULL),
                                     WICK_BUILTIN_MUL, 2, d));
  if (sq == NULL || sq->op->inputs[0] != d || sq->op->inputs[1] != d || !out_like(f, sq, x))
    return -1;
  int32_t r = variance_rsqrt(f, c, out0(sq), mu);
  if (r < 0) return -1;
  wick_node *scale = take(c, sole_reader(f, r, WICK_BUILTIN_MUL, 2));
  if (scale == NULL || !reads_pair(scale, d, r) || !out_like(f, scale, x)) return -1;
  int32_t y = out0(scale);
  size_t inner = c->norm.inner;
  int32_t k;
  wick_node *n = row_affine(f, y, WICK_BUILTIN_MUL, x, split, inner, &k);
  if (n != NULL) {
    c->norm.gamma = k;
    y = out0(take(c, n));
  }
  n = row_affine(f, y, WICK_BUILTIN_ADD, x, split, inner, &k);
  if (n != NULL) {
    c->norm.beta = k;
    y = out0(take(c, n));
  }
  c->norm.form = WICK_NORM_CENTERED;
  return y;
}

/* TensorFlow's converter (Keras LayerNormalization): NEG(mu) = nm;
 * SQUARED_DIFFERENCE(x, mu) -> MEAN -> ADD eps -> RSQRT = r; [MUL(r, gamma)]
 * = s; MUL(nm, s) [-> ADD beta] = c; MUL(x, s) = a; ADD(a, c). */
static int32_t match_scaled(const fuse_ctx *f, norm_chain *c, int32_t x, int32_t mu,
                            int32_t split) {
  wick_node *u, *v;
  if (!two_readers(f, mu, &u, &v)) return -1;
  wick_node *neg = op_reading(u, WICK_BUILTIN_NEG, 1, mu);
  wick_node *sqd = op_reading(v, WICK_BUILTIN_SQUARED_DIFFERENCE, 2, mu);
  if (neg == NULL || sqd == NULL) {
    neg = op_reading(v, WICK_BUILTIN_NEG, 1, mu);
    sqd = op_reading(u, WICK_BUILTIN_SQUARED_DIFFERENCE, 2, mu);
  }
  if (take(c, neg) == NULL || take(c, sqd) == NULL || !out_like(f, neg, mu) ||
      !reads_pair(sqd, x, mu) || !out_like(f, sqd, x))
    return -1;
  int32_t r = variance_rsqrt(f, c, out0(sqd), mu);
  if (r < 0) return -1;
  size_t inner = c->norm.inner;
  int32_t s = r, k;
  wick_node *g = row_affine(f, r, WICK_BUILTIN_MUL, x, split, inner, &k);
  if (g != NULL) {
    c->norm.gamma = k;
    s = out0(take(c, g));
  }
  if (!two_readers(f, s, &u, &v)) return -1;
  wick_node *shift = op_reading(u, WICK_BUILTIN_MUL, 2, s),
            *scaled = op_reading(v, WICK_BUILTIN_MUL, 2, s);
  if (shift == NULL || scaled == NULL || !reads_pair(shift, out0(neg), s)) {
    wick_node *t = shift;
    shift = scaled;
    scaled = t;
  }
  if (take(c, shift) == NULL || take(c, scaled) == NULL || !reads_pair(shift, out0(neg), s) ||
      !reads_pair(scaled, x, s) || !out_like(f, scaled, x) || !out_like(f, shift, s) ||
      !private_tensor(f, out0(neg), 1))
    return -1;
  int32_t offset = out0(shift);
  wick_node *b = row_affine(f, offset, WICK_BUILTIN_ADD, x, split, inner, &k);
  if (b != NULL) {
    c->norm.beta = k;
    offset = out0(take(c, b));
  }
  wick_node *sum = take(c, sole_reader(f, offset, WICK_BUILTIN_ADD, 2));
  if (sum == NULL || !reads_pair(sum, out0(scaled), offset) ||
      !private_tensor(f, out0(scaled), 1) || !out_like(f, sum, x))
    return -1;
  c->norm.form = WICK_NORM_SCALED;
  return out0(sum);
}

/* A layer normalization starting at MEAN node m: run by m as one kernel,
 * the rest of the chain skipped (wick_norm_fusion). */
static void fuse_layer_norm(fuse_ctx *f, wick_node *m) {
  int32_t x = wick_node_input_index(m, 0), mu = out0(m);
  if (x < 0 || m->op->num_outputs != 1 || !plain_f32(&f->g->tensors[x]) ||
      !plain_f32(&f->g->tensors[mu]))
    return;
  int32_t split;
  size_t inner = trailing_mean_inner(&f->g->tensors[x], &f->g->tensors[mu], &split);
  if (inner < 2) return;
  norm_chain c = {.count = 0, .norm = {WICK_NORM_NONE, -1, -1, 0.0f, inner}};
  int32_t y =
      f->readers[mu] == 1 ? match_centered(f, &c, x, mu, split) : match_scaled(f, &c, x, mu, split);
  if (y < 0 || y == x) return;
  for (int i = 0; i < c.count; i++) c.nodes[i]->fused = true;
  m->fusion.norm = c.norm;
  redirect(m, y);
  size_t scratch = wick_thread_pool_threads(f->g->interp->pool) * inner * sizeof(float);
  if (m->scratch_bytes < scratch) m->scratch_bytes = scratch;
}

/* ---------------------------------------------------------------- channel affine */

/* A constant float tensor of one value per channel of x: [C] or [1, ..., 1, C], C x's last
 * dimension (rank at most x's). */
static bool channel_constant(const fuse_ctx *f, int32_t c, const wick_tensor *x) {
  if (c < 0 || x->rank < 1) return false;
  const wick_tensor *t = &f->g->tensors[c];
  if (!plain_f32(t) || !t->known || t->data == NULL || t->rank < 1 || t->rank > x->rank ||
      t->dims[t->rank - 1] != x->dims[x->rank - 1])
    return false;
  for (int32_t i = 0; i + 1 < t->rank; i++)
    if (t->dims[i] != 1) return false;
  return true;
}

/* MUL node m (x times a channel constant) whose private output only an ADD of a channel
 * constant reads: the pair runs as one pass in m. */
static void fuse_channel_affine(fuse_ctx *f, wick_node *m) {
  const wick_operator_info *op = m->op;
  if (op->num_inputs != 2 || op->num_outputs != 1 || op->params.activation != WICK_ACT_NONE) return;
  const int32_t t = out0(m);
  for (int scale_first = 0; scale_first < 2; scale_first++) {
    const int32_t x = op->inputs[scale_first], s = op->inputs[1 - scale_first];
    if (x < 0 || x == t) continue;
    const wick_tensor *xt = &f->g->tensors[x];
    if (!plain_f32(xt) || xt->known || !channel_constant(f, s, xt) || !out_like(f, m, x) ||
        !private_tensor(f, t, 1))
      continue;
    wick_node *a = reader_of(f, t, (uint32_t)(m - f->g->nodes), NULL);
    if (a == NULL || !live(a) || a->child[0] != NULL || a->op->builtin != WICK_BUILTIN_ADD ||
        a->op->num_inputs != 2 || a->op->num_outputs != 1 || !plain_activation(a) ||
        !out_like(f, a, x))
      return;
    const int32_t *in = a->op->inputs;
    const bool shift_first = in[1] == t;
    const int32_t b = shift_first ? in[0] : in[1];
    if ((shift_first ? in[1] : in[0]) != t || b == t || !channel_constant(f, b, xt)) return;
    wick_affine_fusion *af = &m->fusion.affine;
    af->on = true;
    af->scale_first = scale_first != 0;
    af->shift_first = shift_first;
    af->input = x, af->scale = s, af->shift = b;
    af->channels = (size_t)xt->dims[xt->rank - 1];
    af->lo = act_bound(a, false);
    af->hi = act_bound(a, true);
    redirect(m, out0(a));
    a->fused = true;
    return;
  }
}

/* ---------------------------------------------------------------- binary op + clamp */

/* A float ADD / SUB / MUL / DIV b without an activation whose private output only a RELU,
 * RELU6, RELU_N1_TO_1 or RELU_0_TO_1 reads: that node's clamp becomes b's. Every kernel of
 * those activations computes min(hi, max(lo, x)) with x passing through (NaN, -0), as the
 * binary kernels' clamp does, and b's own clamp without an activation is the identity:
 * bit-identical. */
static void fuse_binary_clamp(fuse_ctx *f, wick_node *b) {
  const wick_operator_info *op = b->op;
  const int32_t k = op->builtin;
  if ((k != WICK_BUILTIN_ADD && k != WICK_BUILTIN_SUB && k != WICK_BUILTIN_MUL &&
       k != WICK_BUILTIN_DIV) ||
      op->num_inputs != 2 || op->num_outputs != 1 || op->params.activation != WICK_ACT_NONE ||
      op->inputs[0] < 0 || op->inputs[1] < 0 || !plain_f32(&f->g->tensors[op->inputs[0]]) ||
      !plain_f32(&f->g->tensors[op->inputs[1]]))
    return;
  const int32_t t = out0(b);
  if (!private_tensor(f, t, 1)) return;
  wick_node *a = reader_of(f, t, (uint32_t)(b - f->g->nodes), NULL);
  if (a == NULL || !live(a) || a->child[0] != NULL) return;
  float lo, hi;
  switch (activation_kind(a)) {
    case WICK_F32_RELU: lo = 0.0f, hi = INFINITY; break;
    case WICK_F32_RELU6: lo = 0.0f, hi = 6.0f; break;
    case WICK_F32_RELU_N1_TO_1: lo = -1.0f, hi = 1.0f; break;
    case WICK_F32_RELU_0_TO_1: lo = 0.0f, hi = 1.0f; break;
    default: return;
  }
  const int32_t o = unary_output(f, a, t);
  if (o < 0) return;
  b->fusion.clamp = true;
  b->fusion.lo = lo, b->fusion.hi = hi;
  redirect(b, o);
  a->fused = true;
}

/* ---------------------------------------------------------------- GELU */

#define GELU_SQRT_2_OVER_PI 0.79788456080286535588
#define GELU_CUBIC 0.044715

/* The nodes of a decomposed GELU and its input. */
typedef struct gelu_chain {
  wick_node *nodes[16];
  int count;
  int32_t x;
  bool overflow;
} gelu_chain;

static void gelu_take(gelu_chain *c, wick_node *n) {
  if (c->count < (int)(sizeof c->nodes / sizeof c->nodes[0]))
    c->nodes[c->count++] = n;
  else
    c->overflow = true;
}

/* The value of a constant float tensor of one element. */
static bool scalar_constant(const fuse_ctx *f, int32_t t, double *value) {
  if (t < 0) return false;
  const wick_tensor *c = &f->g->tensors[t];
  if (!plain_f32(c) || !c->known || c->data == NULL || wick_tensor_elements(c) != 1) return false;
  float v;
  memcpy(&v, c->data, sizeof v);
  *value = v;
  return true;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-6 * fabs(b); }

/* The private tensor t as coef * x^power, built by MUL, POW (constant
 * exponent 2 or 3) and SQUARE from x and one-element constants, every node
 * of x's shape; its nodes are added to the chain. */
static bool monomial(const fuse_ctx *f, gelu_chain *c, int32_t t, double *coef, int *power,
                     int depth) {
  if (t == c->x) {
    *coef = 1.0, *power = 1;
    return true;
  }
  if (scalar_constant(f, t, coef)) {
    *power = 0;
    return true;
  }
  if (depth > 6 || !private_tensor(f, t, 1) || f->producer[t] < 0) return false;
  wick_node *p = &f->g->nodes[f->producer[t]];
  if (!live(p) || p->op->num_outputs != 1 || p->op->params.activation != WICK_ACT_NONE ||
      !out_like(f, p, c->x))
    return false;
  const int32_t *in = p->op->inputs;
  double c0, c1, e;
  int p0, p1;
  switch (p->op->builtin) {
    case WICK_BUILTIN_MUL:
      if (p->op->num_inputs != 2 || !monomial(f, c, in[0], &c0, &p0, depth + 1) ||
          !monomial(f, c, in[1], &c1, &p1, depth + 1))
        return false;
      *coef = c0 * c1, *power = p0 + p1;
      break;
    case WICK_BUILTIN_POW:
      if (p->op->num_inputs != 2 || !scalar_constant(f, in[1], &e) || (e != 2.0 && e != 3.0) ||
          !monomial(f, c, in[0], &c0, &p0, depth + 1))
        return false;
      *coef = pow(c0, e), *power = p0 * (int)e;
      break;
    case WICK_BUILTIN_SQUARE:
      if (p->op->num_inputs != 1 || !monomial(f, c, in[0], &c0, &p0, depth + 1)) return false;
      *coef = c0 * c0, *power = 2 * p0;
      break;
    default: return false;
  }
  gelu_take(c, p);
  return true;
}

/* t = x + GELU_CUBIC x^3 (an ADD of two monomials, either order). */
static bool gelu_inner(const fuse_ctx *f, gelu_chain *c, int32_t t) {
  if (!private_tensor(f, t, 1) || f->producer[t] < 0) return false;
  wick_node *add = op_reading(&f->g->nodes[f->producer[t]], WICK_BUILTIN_ADD, 2,
                              f->g->nodes[f->producer[t]].op->inputs[0]);
  if (add == NULL || !out_like(f, add, c->x)) return false;
  double c0, c1;
  int p0, p1;
  if (!monomial(f, c, add->op->inputs[0], &c0, &p0, 0) ||
      !monomial(f, c, add->op->inputs[1], &c1, &p1, 0))
    return false;
  if (p0 == 3) {
    double ct = c0;
    int pt = p0;
    c0 = c1, p0 = p1, c1 = ct, p1 = pt;
  }
  gelu_take(c, add);
  return p0 == 1 && near(c0, 1.0) && p1 == 3 && near(c1, GELU_CUBIC);
}

/* Can t's producer take an epilogue on its output (its record: WICK_OP_TAKES_EPILOGUE)? */
static bool epilogue_producer(const fuse_ctx *f, int32_t t) {
  if (t < 0 || f->producer[t] < 0 || f->graph_output[t]) return false;
  const wick_node *p = &f->g->nodes[f->producer[t]];
  int32_t in = wick_node_input_index(p, 0);
  return live(p) && p->child[0] == NULL && p->op->num_outputs == 1 && p->op->num_inputs >= 1 &&
         wick_op_has(p->def, WICK_OP_TAKES_EPILOGUE) && in >= 0 && plain_f32(&f->g->tensors[in]) &&
         p->op->outputs[0] == t && p->fusion.activation == 0 && p->fusion.residual == 0 &&
         !p->fusion.redirected;
}

/* A decomposed tanh-form GELU around TANH node th:
 *   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 * with the constant factors and the powers of x spread over MUL / POW /
 * SQUARE nodes in any grouping (TensorFlow's converter writes a hand-written
 * x * x * x form this way; builtin GELU otherwise). Every intermediate has
 * one reader and x's shape. Runs as the vectorized GELU_TANH: in the
 * epilogue of x's producer when x has no other reader, else in the chain's
 * first node. */
static void fuse_gelu_tanh(fuse_ctx *f, wick_node *th) {
  int32_t v = th->op->inputs[0], w = out0(th);
  if (!private_tensor(f, v, 1) || f->producer[v] < 0 || !plain_f32(&f->g->tensors[w])) return;
  gelu_chain c = {.count = 0, .x = -1, .overflow = false};
  /* v = MUL(u, sqrt(2/pi)): x is the leaf of u's linear monomial; find it
   * through u = ADD(a, b), a or b being x itself or a product with it */
  wick_node *scale = &f->g->nodes[f->producer[v]];
  double k;
  if (op_reading(scale, WICK_BUILTIN_MUL, 2, scale->op->inputs[0]) == NULL) return;
  int32_t u = scale->op->inputs[0];
  if (!scalar_constant(f, scale->op->inputs[1], &k)) {
    u = scale->op->inputs[1];
    if (!scalar_constant(f, scale->op->inputs[0], &k)) return;
  }
  if (!near(k, GELU_SQRT_2_OVER_PI) || !private_tensor(f, u, 1) || f->producer[u] < 0) return;
  const wick_node *add = &f->g->nodes[f->producer[u]];
  if (add->op->builtin != WICK_BUILTIN_ADD || add->op->num_inputs != 2) return;
  bool inner = false; /* u = x + 0.044715 x^3: try each operand of the ADD as x */
  for (int i = 0; i < 2 && !inner; i++) {
    c.count = 0;
    c.x = add->op->inputs[i];
    inner = c.x >= 0 && plain_f32(&f->g->tensors[c.x]) && out_like(f, th, c.x) &&
            out_like(f, scale, c.x) && gelu_inner(f, &c, u);
  }
  if (!inner) return;
  gelu_take(&c, scale);
  gelu_take(&c, th);
  /* z = ADD(tanh, 1), then MULs up to 0.5 x z */
  wick_node *one = sole_reader(f, w, WICK_BUILTIN_ADD, 2);
  double ov;
  if (one == NULL || !scalar_constant(f, other_input(one, w), &ov) || ov != 1.0 ||
      !out_like(f, one, c.x))
    return;
  gelu_take(&c, one);
  int32_t y = out0(one);
  double coef = 1.0;
  int power = 0;
  for (int steps = 0; !(power == 1 && near(coef, 0.5)); steps++) {
    wick_node *m = sole_reader(f, y, WICK_BUILTIN_MUL, 2);
    double mc;
    int mp;
    if (steps == 3 || m == NULL || !out_like(f, m, c.x) || other_input(m, y) == y ||
        !monomial(f, &c, other_input(m, y), &mc, &mp, 0))
      return;
    gelu_take(&c, m);
    coef *= mc, power += mp;
    y = out0(m);
  }
  if (c.overflow) return;
  /* x's readers all in the chain: the producer's epilogue can run it */
  uint32_t x_slots = 0;
  wick_node *first = c.nodes[0];
  for (int i = 0; i < c.count; i++) {
    for (uint32_t k2 = 0; k2 < c.nodes[i]->op->num_inputs; k2++)
      x_slots += c.nodes[i]->op->inputs[k2] == c.x;
    if (c.nodes[i] < first) first = c.nodes[i];
  }
  for (int i = 0; i < c.count; i++) c.nodes[i]->fused = true;
  if (f->readers[c.x] == x_slots && epilogue_producer(f, c.x)) {
    wick_node *p = &f->g->nodes[f->producer[c.x]];
    p->fusion.activation = 1 + WICK_F32_GELU_TANH;
    redirect(p, y);
    return;
  }
  first->fused = false;
  first->fusion.unary = 1 + WICK_F32_GELU_TANH;
  first->fusion.unary_input = c.x;
  redirect(first, y);
}

/* ---------------------------------------------------------------- attention */

/* The scalar of step n of an attention chain on private tensor t: MUL(t, c) / MUL(c, t) or
 * DIV(t, c) with c a one-element constant, or a one-input op equal to a vectorized unary
 * kernel (TANH). Fills `step`; false when n is none of these. */
static bool attention_step(const fuse_ctx *f, const wick_node *n, int32_t t,
                           const wick_f32_kernels *kern, wick_attention_fusion *a) {
  if (a->num_steps == WICK_ATTENTION_MAX_STEPS || n->op->num_outputs != 1 ||
      n->op->params.activation != WICK_ACT_NONE || !out_like(f, n, t))
    return false;
  const int32_t i = a->num_steps;
  const int kind = activation_kind(n);
  if (kind >= 0 && n->op->num_inputs == 1 && n->op->inputs[0] == t) {
    if (kern->unary[kind] == NULL) return false;
    a->steps[i].kind = WICK_ATTENTION_UNARY;
    a->steps[i].unary = kind;
  } else if ((n->op->builtin == WICK_BUILTIN_MUL || n->op->builtin == WICK_BUILTIN_DIV) &&
             n->op->num_inputs == 2) {
    const bool first = n->op->inputs[1] == t && n->op->inputs[0] != t;
    if (n->op->builtin == WICK_BUILTIN_DIV && first) return false; /* c / t */
    double c;
    if (!scalar_constant(f, n->op->inputs[first ? 0 : 1], &c)) return false;
    a->steps[i].kind = n->op->builtin == WICK_BUILTIN_MUL ? WICK_ATTENTION_MUL : WICK_ATTENTION_DIV;
    a->steps[i].scalar_first = first;
    a->steps[i].value = (float)c;
  } else {
    return false;
  }
  a->num_steps++;
  return true;
}

/* Tensor t exists before node `at` runs: an input, a constant, or written at an earlier
 * position of the execution order. */
static bool exists_before(const fuse_ctx *f, int32_t t, uint32_t at) {
  return f->producer[t] < 0 ||
         wick_graph_position(f->g, (uint32_t)f->producer[t]) < wick_graph_position(f->g, at);
}

/* Same batch dimensions (all but the last two) and rank. */
static bool same_batch(const wick_tensor *a, const wick_tensor *b) {
  if (a->rank != b->rank || a->rank < 2) return false;
  for (int32_t i = 0; i + 2 < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static size_t batch_count(const wick_tensor *t) {
  size_t n = 1;
  for (int32_t i = 0; i + 2 < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

/* The nodes of an attention being matched. */
typedef struct attention_chain {
  wick_node *nodes[24];
  int count;
  bool overflow;
} attention_chain;

static void chain_take(attention_chain *c, wick_node *n) {
  if (c->count < (int)(sizeof c->nodes / sizeof c->nodes[0]))
    c->nodes[c->count++] = n;
  else
    c->overflow = true;
}

/* The sole live reader of private tensor t, or NULL. */
static wick_node *next_node(const fuse_ctx *f, int32_t t) {
  if (!private_tensor(f, t, 1) || f->producer[t] < 0) return NULL;
  wick_node *n = reader_of(f, t, (uint32_t)f->producer[t], NULL);
  return n != NULL && live(n) ? n : NULL;
}

/* n is a RESHAPE-like node (WICK_OP_ALIAS: its output is its input's bytes) of t keeping rows
 * of s values (last dimension s). */
static bool row_alias(const fuse_ctx *f, const wick_node *n, int32_t t, int64_t s) {
  if (!wick_op_has(n->def, WICK_OP_ALIAS) || n->op->num_outputs != 1 || n->op->num_inputs < 1 ||
      n->op->inputs[0] != t)
    return false;
  const wick_tensor *in = &f->g->tensors[t], *out = &f->g->tensors[out0(n)];
  return plain_f32(out) && out->rank >= 1 && out->dims[out->rank - 1] == s &&
         wick_tensor_elements(out) == wick_tensor_elements(in);
}

/* Past the RESHAPE-like nodes from private tensor *t (taken into c): the next other node. */
static wick_node *skip_aliases(const fuse_ctx *f, attention_chain *c, int32_t *t, int64_t s) {
  for (;;) {
    wick_node *n = next_node(f, *t);
    if (n == NULL || !row_alias(f, n, *t, s)) return n;
    chain_take(c, n);
    *t = out0(n);
  }
}

/* A scaled dot-product attention starting at BATCH_MATMUL node b1 (wick_attention_fusion):
 * run by b1 over the visible key positions (src/ops/attention.c), the rest skipped. Every
 * intermediate is private; RESHAPE-like nodes that keep rows of S values may sit anywhere
 * between the two BATCH_MATMULs (wick's converter writes the attention over 3-d matmuls
 * between 4-d views), and in front of the values; q and the keys share their batch dims; the
 * second BATCH_MATMUL's operands have the first's rows (batch count and M) and no broadcast;
 * the mask broadcasts to the scores' view the ADD sees, with S columns; the values and the
 * mask exist before b1 runs (through their RESHAPEs, which then run fused), and nothing
 * between the two BATCH_MATMULs assigns a variable or runs a subgraph (either could write the
 * cache the values live in). */
static void fuse_attention(fuse_ctx *f, wick_node *b1, const wick_f32_kernels *kern) {
  wick_graph *g = f->g;
  const wick_operator_info *op = b1->op;
  if (op->num_inputs != 2 || op->num_outputs != 1 || op->params.adj_x || op->params.adj_y ||
      op->inputs[0] < 0 || op->inputs[1] < 0)
    return;
  const wick_tensor *q = &g->tensors[op->inputs[0]], *kt = &g->tensors[op->inputs[1]];
  const int32_t scores = out0(b1);
  const wick_tensor *st = &g->tensors[scores];
  if (!plain_f32(q) || !plain_f32(kt) || !plain_f32(st) || kt->known || !same_batch(q, kt) ||
      !same_batch(q, st))
    return;
  const int32_t r = q->rank;
  const int64_t m = q->dims[r - 2], d = q->dims[r - 1], s = kt->dims[r - 1];
  if (m <= 0 || d <= 0 || s <= 0 || kt->dims[r - 2] != d) return;
  wick_attention_fusion a = {.on = true};
  attention_chain c = {.count = 0};
  /* the steps (and RESHAPEs), up to the ADD of the mask */
  int32_t t = scores;
  wick_node *add;
  for (;;) {
    add = skip_aliases(f, &c, &t, s);
    if (add == NULL) return;
    if (add->op->builtin == WICK_BUILTIN_ADD) break;
    if (!attention_step(f, add, t, kern, &a)) return;
    chain_take(&c, add);
    t = out0(add);
  }
  const wick_tensor *view = &g->tensors[t];
  if (add->op->num_inputs != 2 || add->op->num_outputs != 1 ||
      add->op->params.activation != WICK_ACT_NONE || !out_like(f, add, t))
    return;
  a.mask_first = add->op->inputs[1] == t;
  a.mask = a.mask_first ? add->op->inputs[0] : add->op->inputs[1];
  if (a.mask < 0 || a.mask == t || (!a.mask_first && add->op->inputs[0] != t)) return;
  const wick_tensor *mt = &g->tensors[a.mask];
  if (!plain_f32(mt) || mt->rank < 1 || mt->rank > view->rank || mt->dims[mt->rank - 1] != s ||
      !exists_before(f, a.mask, b1->index))
    return;
  for (int32_t i = 0; i + 1 < mt->rank; i++) {
    const int32_t dim = mt->dims[i], full = view->dims[view->rank - mt->rank + i];
    if (dim != 1 && dim != full) return;
  }
  a.view = t;
  chain_take(&c, add);
  /* SOFTMAX, then the BATCH_MATMUL with the values */
  t = out0(add);
  wick_node *sm = skip_aliases(f, &c, &t, s);
  if (sm == NULL || sm->op->builtin != WICK_BUILTIN_SOFTMAX || sm->op->num_inputs != 1 ||
      sm->op->num_outputs != 1 || !out_like(f, sm, t))
    return;
  /* beta * (masked - max) must stay below exp's underflow (src/kernels/attention.c) */
  const float beta = sm->op->params.beta;
  if (!(beta >= 0x1p-100f && beta <= 0x1p100f)) return;
  a.beta = beta;
  chain_take(&c, sm);
  t = out0(sm);
  wick_node *b2 = skip_aliases(f, &c, &t, s);
  if (b2 == NULL || b2->op->builtin != WICK_BUILTIN_BATCH_MATMUL || b2->op->num_inputs != 2 ||
      b2->op->num_outputs != 1 || b2->op->inputs[0] != t || b2->op->params.adj_x ||
      b2->op->params.adj_y || b2->op->inputs[1] < 0 || b2->op->inputs[1] == t)
    return;
  const wick_tensor *p = &g->tensors[t], *v = &g->tensors[b2->op->inputs[1]];
  const wick_tensor *o = &g->tensors[out0(b2)];
  const int32_t r2 = p->rank;
  if (!plain_f32(v) || !plain_f32(o) || !same_batch(p, v) || !same_batch(p, o) ||
      p->dims[r2 - 2] != m || batch_count(p) != batch_count(q) || v->dims[r2 - 2] != s ||
      v->dims[r2 - 1] <= 0 || o->dims[r2 - 2] != m || o->dims[r2 - 1] != v->dims[r2 - 1])
    return;
  /* the values: through RESHAPEs written after b1 (which then run fused) to bytes written
   * before it */
  a.values = b2->op->inputs[1];
  while (!exists_before(f, a.values, b1->index)) {
    wick_node *n = &g->nodes[f->producer[a.values]];
    const int32_t in = n->op->num_inputs >= 1 ? n->op->inputs[0] : -1;
    if (!live(n) || !private_tensor(f, a.values, 1) || in < 0 ||
        !wick_op_has(n->def, WICK_OP_ALIAS) || n->op->num_outputs != 1 ||
        !plain_f32(&g->tensors[in]) ||
        wick_tensor_elements(&g->tensors[in]) != wick_tensor_elements(v))
      return;
    chain_take(&c, n);
    a.values = in;
  }
  chain_take(&c, b2);
  if (c.overflow) return;
  for (uint32_t pos = wick_graph_position(g, b1->index) + 1;
       pos < wick_graph_position(g, b2->index); pos++) {
    const wick_node *n = &g->nodes[wick_graph_node_at(g, pos)];
    if (n->partition >= 0 || wick_op_has(n->def, WICK_OP_ASSIGNS_VARIABLE) ||
        wick_op_has(n->def, WICK_OP_RUNS_SUBGRAPHS))
      return;
  }
  a.batches = batch_count(q);
  a.m = (size_t)m, a.d = (size_t)d, a.s = (size_t)s, a.dv = (size_t)v->dims[r2 - 1];
  wick_f32_attention layout;
  if (!wick_f32_attention_init(&layout, kern, a.batches, a.m, a.d, a.s, a.dv,
                               wick_thread_pool_threads(g->interp->pool)))
    return;
  for (int i = 0; i < c.count; i++) c.nodes[i]->fused = true;
  a.inplace = layout.inplace;
  b1->fusion.attention = a;
  redirect(b1, out0(b2));
  if (b1->scratch_bytes < layout.bytes) b1->scratch_bytes = layout.bytes;
}

/* Readers, producers and graph outputs of every tensor, over the nodes not
 * folded; false when out of memory (then nothing fuses: still correct). */
static bool fuse_ctx_init(fuse_ctx *f, wick_graph *g) {
  wick_mem *mem = &g->interp->mem;
  uint32_t nt = g->info->num_tensors, no = g->info->num_operators;
  f->g = g;
  f->readers = wick_mem_calloc(mem, nt, sizeof *f->readers);
  f->producer = wick_mem_alloc(mem, nt * sizeof *f->producer);
  f->graph_output = wick_mem_calloc(mem, nt, sizeof *f->graph_output);
  if (!f->readers || !f->producer || !f->graph_output) return false;
  for (uint32_t i = 0; i < nt; i++) f->producer[i] = -1;
  for (uint32_t i = 0; i < g->num_outputs; i++) f->graph_output[g->outputs[i]] = true;
  for (uint32_t i = 0; i < no; i++) {
    const wick_node *n = &g->nodes[i];
    if (n->folded) continue;
    for (uint32_t k = 0; k < n->op->num_inputs; k++)
      if (n->op->inputs[k] >= 0) f->readers[n->op->inputs[k]]++;
    for (uint32_t k = 0; k < n->op->num_outputs; k++) f->producer[n->op->outputs[k]] = (int32_t)i;
  }
  return true;
}

static void fuse_ctx_free(fuse_ctx *f) {
  wick_mem *mem = &f->g->interp->mem;
  wick_mem_free(mem, f->readers);
  wick_mem_free(mem, f->producer);
  wick_mem_free(mem, f->graph_output);
}

void wick_graph_fuse(wick_graph *g) {
  uint32_t nt = g->info->num_tensors, no = g->info->num_operators;
  const wick_f32_kernels *kern = wick_f32_kernels_select(false);
  /* the epilogues run the vectorized activations (an ISA without them: no fusion) */
  if (nt == 0 || no == 0 || kern == NULL || kern->unary[WICK_F32_SILU] == NULL) return;
  fuse_ctx f;
  if (fuse_ctx_init(&f, g)) {
    for (uint32_t i = 0; i < no; i++) {
      wick_node *n = &g->nodes[i];
      if (!live(n) || n->child[0] != NULL || n->op->num_outputs != 1 ||
          !wick_op_has(n->def, WICK_OP_TAKES_EPILOGUE))
        continue;
      int32_t in = wick_node_input_index(n, 0);
      if (!plain_f32(&g->tensors[n->op->outputs[0]]) || n->op->num_inputs < 1 || in < 0 ||
          !plain_f32(&g->tensors[in]))
        continue;
      fuse_producer(&f, i);
    }
    for (uint32_t i = 0; i < no; i++) {
      wick_node *n = &g->nodes[i];
      if (live(n) && n->child[0] == NULL && n->op->builtin == WICK_BUILTIN_LOGISTIC &&
          n->op->num_inputs == 1 && n->op->num_outputs == 1 && !n->fusion.redirected)
        fuse_q8_swish(&f, n);
    }
    for (uint32_t i = 0; i < no; i++) {
      wick_node *n = &g->nodes[i];
      if (live(n) && n->op->builtin == WICK_BUILTIN_TANH && n->op->num_inputs == 1 &&
          n->op->num_outputs == 1)
        fuse_gelu_tanh(&f, n);
    }
    for (uint32_t i = 0; i < no && !g->interp->no_attention_fusion; i++) {
      wick_node *n = &g->nodes[i];
      if (live(n) && n->child[0] == NULL && n->op->builtin == WICK_BUILTIN_BATCH_MATMUL &&
          !n->fusion.redirected)
        fuse_attention(&f, n, kern);
    }
    for (uint32_t i = 0; i < no; i++) {
      wick_node *n = &g->nodes[i];
      if (live(n) && n->child[0] == NULL && n->op->builtin == WICK_BUILTIN_MEAN &&
          n->fusion.activation == 0 && !n->fusion.redirected)
        fuse_layer_norm(&f, n);
    }
    /* last: a layer norm's MUL gamma -> ADD beta stays in its chain */
    for (uint32_t i = 0; i < no; i++) {
      wick_node *n = &g->nodes[i];
      if (live(n) && n->child[0] == NULL && n->op->builtin == WICK_BUILTIN_MUL &&
          !n->fusion.redirected && !wick_node_runs_fused(n))
        fuse_channel_affine(&f, n);
    }
    for (uint32_t i = 0; i < no; i++) {
      wick_node *n = &g->nodes[i];
      if (live(n) && n->child[0] == NULL && !n->fusion.redirected && !wick_node_runs_fused(n))
        fuse_binary_clamp(&f, n);
    }
  }
  fuse_ctx_free(&f);
}

/* ---------------------------------------------------------------- PAD folding */

struct wick_pad_folder {
  fuse_ctx f; /* over the file's nodes: nothing is folded yet when it is built */
};

wick_pad_folder *wick_pad_folder_create(wick_graph *g) {
  uint32_t no = g->info->num_operators;
  bool any = false;
  for (uint32_t i = 0; i < no && !any; i++)
    any = g->nodes[i].op->builtin == WICK_BUILTIN_PAD ||
          g->nodes[i].op->builtin == WICK_BUILTIN_PADV2;
  if (!any || g->info->num_tensors == 0) return NULL;
  wick_pad_folder *p = wick_mem_alloc(&g->interp->mem, sizeof *p);
  if (p == NULL) return NULL;
  if (!fuse_ctx_init(&p->f, g)) {
    wick_pad_folder_destroy(p);
    return NULL;
  }
  return p;
}

void wick_pad_folder_destroy(wick_pad_folder *p) {
  if (p == NULL) return;
  wick_mem *mem = &p->f.g->interp->mem;
  fuse_ctx_free(&p->f);
  wick_mem_free(mem, p);
}

/* Same quantization (none, or one scale and zero point) on both tensors. */
static bool same_quantization(const wick_tensor *a, const wick_tensor *b) {
  const wick_quant *qa = a->info ? &a->info->quant : NULL, *qb = b->info ? &b->info->quant : NULL;
  uint32_t ca = qa ? qa->count : 0, cb = qb ? qb->count : 0;
  if (ca != cb || ca > 1) return false;
  return ca == 0 || (qa->scale[0] == qb->scale[0] && qa->zero_point[0] == qb->zero_point[0]);
}

/* The fill a PAD writes into x's padded copy, as raw bits in *fill (PADV2's
 * value; else 0, or the zero point for a quantized type); false when it is
 * not known at prepare or the type is not one a convolution or pool takes. */
static bool pad_fill(const wick_tensor *x, const wick_tensor *value, int64_t *fill) {
  const wick_quant *q = x->info ? &x->info->quant : NULL;
  const bool quantized = q != NULL && q->count == 1;
  if (value != NULL && (!value->known || value->data == NULL || value->type != x->type))
    return false;
  switch (x->type) {
    case WICK_DTYPE_FLOAT32: {
      uint32_t bits = 0;
      if (value) memcpy(&bits, value->data, sizeof bits);
      *fill = bits;
      return true;
    }
    case WICK_DTYPE_INT8:
      *fill = value ? *(const int8_t *)value->data : quantized ? q->zero_point[0] : 0;
      return quantized;
    case WICK_DTYPE_UINT8:
      *fill = value ? *(const uint8_t *)value->data : quantized ? q->zero_point[0] : 0;
      return quantized;
    case WICK_DTYPE_INT16: {
      int16_t v = 0;
      if (value) memcpy(&v, value->data, sizeof v);
      *fill = value ? v : quantized ? q->zero_point[0] : 0;
      return quantized;
    }
    default: return false;
  }
}

/* What the consumer's implicit padding reads, in x's raw type: a convolution
 * +0.0 (float) or the zero point; MAX_POOL_2D a value no tap exceeds (-inf,
 * the type's minimum), since its kernels start from it and skip outside taps. */
static bool implicit_fill(const wick_node *consumer, const wick_tensor *x, int64_t fill) {
  const wick_quant *q = x->info ? &x->info->quant : NULL;
  if (consumer->op->builtin == WICK_BUILTIN_MAX_POOL_2D) {
    switch (x->type) {
      case WICK_DTYPE_FLOAT32: return fill == 0xff800000; /* -inf */
      case WICK_DTYPE_INT8: return fill == INT8_MIN;
      case WICK_DTYPE_UINT8: return fill == 0;
      case WICK_DTYPE_INT16: return fill == INT16_MIN;
      default: return false;
    }
  }
  if (x->type == WICK_DTYPE_FLOAT32) return fill == 0;
  return q != NULL && q->count == 1 && fill == q->zero_point[0];
}

/* The live PAD / PADV2 node whose private output is input 0 of n (a
 * convolution or MAX_POOL_2D), or NULL. */
static wick_node *foldable_pad(const fuse_ctx *f, const wick_node *n) {
  const wick_operator_info *op = n->op;
  const bool conv =
      op->builtin == WICK_BUILTIN_CONV_2D || op->builtin == WICK_BUILTIN_DEPTHWISE_CONV_2D;
  if ((!conv && op->builtin != WICK_BUILTIN_MAX_POOL_2D) || op->num_inputs < 1 ||
      n->fusion.input != 0)
    return NULL;
  int32_t t = op->inputs[0];
  if (t < 0 || f->producer[t] < 0 || f->readers[t] != 1 || f->graph_output[t]) return NULL;
  wick_node *p = &f->g->nodes[f->producer[t]];
  int32_t b = p->op->builtin;
  if ((b != WICK_BUILTIN_PAD && b != WICK_BUILTIN_PADV2) || p->def == NULL || !live(p) ||
      p->child[0] != NULL || p->op->num_outputs != 1 || p->op->num_inputs < 2 ||
      p->op->inputs[0] < 0 || p->op->inputs[1] < 0)
    return NULL;
  return p;
}

void wick_pad_folder_fold(wick_pad_folder *pf, wick_node *n) {
  const fuse_ctx *f = &pf->f;
  wick_node *p = foldable_pad(f, n);
  if (p == NULL) return;
  const wick_tensor *tensors = f->g->tensors;
  int32_t xi = p->op->inputs[0], ti = p->op->outputs[0];
  const wick_tensor *x = &tensors[xi], *t = &tensors[ti], *pads = &tensors[p->op->inputs[1]];
  const wick_tensor *value =
      p->op->num_inputs > 2 && p->op->inputs[2] >= 0 ? &tensors[p->op->inputs[2]] : NULL;
  int64_t fill;
  if (x->rank != 4 || t->rank != 4 || x->type != t->type || (x->info && x->info->is_variable) ||
      (t->info && t->info->is_variable) || !same_quantization(x, t) || !pad_fill(x, value, &fill) ||
      !implicit_fill(n, x, fill))
    return;
  if (!pads->known || pads->data == NULL || !wick_is_int_index_type(pads->type) ||
      pads->rank != 2 || pads->dims[0] != 4 || pads->dims[1] != 2)
    return;
  int64_t c[8];
  for (int i = 0; i < 8; i++) c[i] = wick_read_int(pads, i);
  /* N and C unpadded; H and W in [0, INT32_MAX] (PAD's prepare checked the sums) */
  if (c[0] || c[1] || c[6] || c[7]) return;
  for (int i = 2; i < 6; i++)
    if (c[i] < 0 || c[i] > INT32_MAX) return;
  n->fusion.input = 1 + xi;
  n->fusion.pad[0] = (int32_t)c[2]; /* top */
  n->fusion.pad[1] = (int32_t)c[3]; /* bottom */
  n->fusion.pad[2] = (int32_t)c[4]; /* left */
  n->fusion.pad[3] = (int32_t)c[5]; /* right */
  p->fused = true;
}

void wick_pad_folder_unfold(wick_pad_folder *pf, wick_node *n) {
  if (n->fusion.input == 0) return;
  int32_t t = n->op->inputs[0];
  pf->f.g->nodes[pf->f.producer[t]].fused = false;
  n->fusion.input = 0;
  memset(n->fusion.pad, 0, sizeof n->fusion.pad);
}
