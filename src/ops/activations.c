/*
 * activations.c — activations with parameters: LEAKY_RELU (alpha option),
 * GELU (approximate option) and PRELU (a second input, alpha, broadcast
 * into the input's shape). Float32 here; quantized inputs go to
 * activations_quantized.c.
 *
 * PRELU follows LiteRT: alpha must broadcast against the input and the
 * broadcast shape must be the input's shape (alpha never enlarges the
 * output). Parameterless activations (RELU, LOGISTIC, HARD_SWISH, ELU ...)
 * are in elementwise_unary.c. Float GELU runs the vectorized kernels (error
 * bounds in src/kernels/template/elementwise.h) unless the reference
 * kernels are forced.
 * Next: src/kernels/reference/unary.c.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

static wick_status require_f32(const wick_op_ctx *ctx, const wick_tensor *t, const char *what) {
  bool quantized = t->info != NULL && t->info->quant.count > 0;
  WICK_CHECK_SUPPORTED(ctx, t->type == WICK_DTYPE_FLOAT32,
                       "%s type %s%s is not supported (float32)", what,
                       quantized ? "quantized " : "", wick_dtype_name(t->type));
  return WICK_OK;
}

static wick_status single_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(require_f32(ctx, in, "input"));
  wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, NULL); /* LEAKY_RELU; GELU overrides it */
  return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims);
}

/* ---------------------------------------------------------------- LEAKY_RELU */

static wick_status leaky_relu_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_invoke_quantized(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  wick_f32_leaky_relu__reference(wick_tensor_elements(in), ctx->params->alpha, in->data,
                                 wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

/* v2 adds int16 only. */
const wick_op_def wick_op_leaky_relu = {
    "LEAKY_RELU",   WICK_BUILTIN_LEAKY_RELU, 2,
    single_prepare, leaky_relu_invoke,       WICK_OP_ELEMENTWISE};

/* ---------------------------------------------------------------- GELU */

static wick_status gelu_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_invoke_quantized(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  if (wick_op_data(ctx)) {
    const wick_f32_unary_fn *fn = wick_op_data(ctx);
    (*fn)((size_t)wick_tensor_elements(in), in->data, wick_op_output(ctx, 0)->data);
    return WICK_OK;
  }
  wick_f32_gelu__reference(wick_tensor_elements(in), ctx->params->approximate, in->data,
                           wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

static wick_status gelu_prepare(wick_op_ctx *ctx) {
  WICK_TRY(single_prepare(ctx));
  if (wick_quant_routed(ctx, 0)) return WICK_OK;
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  wick_op_set_data(ctx, NULL);
  if (kern != NULL && kern->unary[WICK_F32_GELU] != NULL) {
    wick_f32_unary_fn *fn = wick_op_alloc(ctx, sizeof *fn);
    if (fn == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    *fn = kern->unary[ctx->params->approximate ? WICK_F32_GELU_TANH : WICK_F32_GELU];
    wick_op_set_data(ctx, fn);
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, NULL);
  }
  return WICK_OK;
}

/* v2 adds int8/uint8 only. */
const wick_op_def wick_op_gelu = {"GELU",
                                  WICK_BUILTIN_GELU,
                                  2,
                                  gelu_prepare,
                                  gelu_invoke,
                                  WICK_OP_ELEMENTWISE | WICK_OP_EPILOGUE(WICK_F32_GELU) |
                                      WICK_OP_EPILOGUE_APPROXIMATE(WICK_F32_GELU_TANH)};

/* ---------------------------------------------------------------- PRELU */

/* `channels` > 0: alpha varies along the last dimension only (per-channel alpha of an NHWC
 * tensor, or a scalar: channels 1 after a broadcast of 1), the row loop of
 * wick_f32_prelu_channels split over the threads; else the reference kernel's general
 * broadcast walk. */
typedef struct prelu_data {
  wick_broadcast bc;
  int64_t rows, channels;
  wick_f32_prelu_fn rows_kernel; /* the vector kernel for the rows (NULL: portable) */
} prelu_data;

static wick_status prelu_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_prelu_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *alpha;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &alpha));
  WICK_TRY(require_f32(ctx, in, "input"));
  WICK_TRY(require_f32(ctx, alpha, "alpha"));
  prelu_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_broadcast *bc = &d->bc;
  WICK_TRY(wick_broadcast_shapes(ctx, in, alpha, &bc->rank, bc->dims));
  bool same = bc->rank == in->rank;
  for (int32_t i = 0; same && i < in->rank; i++) same = bc->dims[i] == in->dims[i];
  WICK_CHECK(ctx, same, "alpha (rank %d) must broadcast into the input's shape (rank %d)",
             alpha->rank, in->rank);
  wick_broadcast_strides(in, bc->rank, bc->dims, bc->a_strides);
  wick_broadcast_strides(alpha, bc->rank, bc->dims, bc->b_strides);
  const int32_t last = bc->rank - 1;
  bool rowwise = true;
  for (int32_t i = 0; i < last; i++) rowwise = rowwise && bc->b_strides[i] == 0;
  const int64_t total = wick_tensor_elements(in);
  if (rowwise && last >= 0 && bc->dims[last] > 0 &&
      (bc->b_strides[last] == 1 || bc->b_strides[last] == 0)) {
    d->channels = bc->dims[last];
    d->rows = total / d->channels;
    if (bc->b_strides[last] == 0 && d->channels > 1) {
      size_t bytes;
      WICK_CHECK(ctx, wick_mul_size((size_t)d->channels, sizeof(float), &bytes),
                 "the input's last dimension is too large");
      wick_op_request_scratch(ctx, bytes);
    }
  }
  wick_op_set_data(ctx, d);
  const wick_f32_kernels *k = wick_f32_kernels_select(wick_op_force_reference(ctx));
  d->rows_kernel = d->channels > 0 && k != NULL ? k->prelu : NULL;
  if (d->channels > 0) /* a row loop over the channels, split over the threads */
    wick_op_set_kernel(ctx, d->rows_kernel ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_GENERIC,
                       "channel rows");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "broadcast");
  return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims);
}

typedef struct prelu_job {
  const prelu_data *d;
  const float *in, *alpha, *alpha_row;
  float *out;
} prelu_job;

static void prelu_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const prelu_job *j = arg;
  const int64_t c = j->d->channels, off = (int64_t)begin * c;
  if (j->d->rows_kernel != NULL) {
    for (size_t r = begin; r < end; r++)
      j->d->rows_kernel((size_t)c, j->in + (int64_t)r * c, j->alpha_row, j->out + (int64_t)r * c);
    return;
  }
  wick_f32_prelu_channels((int64_t)(end - begin), c, j->in + off, j->alpha_row, j->out + off);
}

static wick_status prelu_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_prelu_invoke_quantized(ctx);
  prelu_data *d = wick_op_data(ctx);
  const float *alpha = wick_op_input(ctx, 1)->data;
  if (d->channels > 0) {
    /* A scalar alpha (stride 0 along the last dimension too) becomes one row of copies. */
    const float *row = alpha;
    if (d->bc.b_strides[d->bc.rank - 1] == 0 && d->channels > 1) {
      float *copies = wick_op_scratch(ctx);
      for (int64_t c = 0; c < d->channels; c++) copies[c] = alpha[0];
      row = copies;
    }
    prelu_job j = {d, wick_op_input(ctx, 0)->data, alpha, row, wick_op_output(ctx, 0)->data};
    return wick_parallel_range(ctx, (size_t)d->rows, (uint64_t)d->channels, prelu_rows, &j);
  }
  wick_f32_prelu__reference(&d->bc, wick_op_input(ctx, 0)->data, alpha,
                            wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

const wick_op_def wick_op_prelu = {"PRELU",       WICK_BUILTIN_PRELU, 1,
                                   prelu_prepare, prelu_invoke,       WICK_OP_EPILOGUE_PRELU};
