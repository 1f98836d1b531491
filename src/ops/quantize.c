/*
 * quantize.c — DEQUANTIZE and QUANTIZE between float32 and affine-quantized
 * int8 / uint8 / int16, per-tensor or per-channel; DEQUANTIZE also widens
 * float16 to float32 (the float16 weights of converter output).
 *
 * real = scale * (q - zero_point). Prepare validates the quantization
 * parameters against the tensor's current shape (the file's verifier checked
 * them against the declared shape only; inputs may have been resized):
 * present, per-channel count = size of the quantized dimension, zero points
 * within int32 and, for QUANTIZE (which divides by the scale), scales
 * positive and finite. The checked parameters are copied into op data in the
 * kernel's [outer, channels, inner] layout.
 *
 * QUANTIZE with an integer input (requantization) is in requantize.c.
 * Rounding, saturation and NaN are described in src/kernels/reference/quantize.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct quant_data {
  wick_quant_layout layout;
  float *scale;
  int32_t *zero_point;
  const wick_f32_kernels *kern; /* vector kernels usable (see fast_kernels), or NULL */
} quant_data;

static bool is_q_type(wick_dtype t) {
  return t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 || t == WICK_DTYPE_INT16;
}

/* The vector kernels for an 8- or 16-bit tensor with this layout (per-tensor, or
 * per-channel runs of at least a vector) whose zero points are within the
 * kernels' bound, else NULL (the reference kernels run). */
static const wick_f32_kernels *fast_kernels(const wick_op_ctx *ctx, wick_dtype type,
                                            const wick_quant_layout *l) {
  if (l->channels > 1 && l->inner < 16) return NULL;
  for (int64_t c = 0; c < l->channels; c++)
    if (l->zero_point[c] < -WICK_QUANTIZE8_MAX_ZERO_POINT ||
        l->zero_point[c] > WICK_QUANTIZE8_MAX_ZERO_POINT)
      return NULL;
  const wick_f32_kernels *k = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (k == NULL) return NULL;
  if (type == WICK_DTYPE_INT16) return k->quantize16 != NULL && k->dequantize16 != NULL ? k : NULL;
  return k->quantize8 != NULL && k->dequantize8 != NULL ? k : NULL;
}

/* One elementwise job of the vector kernels: elements [e0, e1) of the
 * [outer, channels, inner] layout, each run of one channel in one call. */
typedef struct quant_job {
  const quant_data *d;
  bool quantize, is_unsigned, is_int16;
  const void *in;
  void *out;
} quant_job;

static void quant_elements(void *arg, size_t e0, size_t e1) {
  const quant_job *j = arg;
  const wick_quant_layout *l = &j->d->layout;
  const size_t inner = (size_t)l->inner, channels = (size_t)l->channels;
  while (e0 < e1) {
    /* per-tensor: channels 1, inner 1, so one run covers the whole range */
    const size_t c = channels == 1 ? 0 : e0 / inner % channels;
    const size_t end = channels == 1 ? e1 : (e0 / inner + 1) * inner;
    const size_t n = (end < e1 ? end : e1) - e0;
    if (j->is_int16 && j->quantize)
      j->d->kern->quantize16(n, (const float *)j->in + e0, (int16_t *)j->out + e0, l->scale[c],
                             l->zero_point[c]);
    else if (j->is_int16)
      j->d->kern->dequantize16(n, (const int16_t *)j->in + e0, (float *)j->out + e0, l->scale[c],
                               l->zero_point[c]);
    else if (j->quantize)
      j->d->kern->quantize8(n, (const float *)j->in + e0, (uint8_t *)j->out + e0, l->scale[c],
                            l->zero_point[c], j->is_unsigned);
    else
      j->d->kern->dequantize8(n, (const uint8_t *)j->in + e0, (float *)j->out + e0, l->scale[c],
                              l->zero_point[c], j->is_unsigned);
    e0 += n;
  }
}

/* Runs the vector kernels over the whole tensor, split over the threads. */
static wick_status run_fast(wick_op_ctx *ctx, const quant_data *d, bool quantize, wick_dtype q_type,
                            const void *in, void *out, size_t n) {
  quant_job j = {d, quantize, q_type == WICK_DTYPE_UINT8, q_type == WICK_DTYPE_INT16, in, out};
  return wick_parallel_elements(ctx, n, quant_elements, &j);
}

/* Builds the kernel layout of quantized tensor `t` (named `what`). */
static wick_status build_layout(wick_op_ctx *ctx, const wick_tensor *t, const char *what,
                                bool divides) {
  const wick_quant *q = t->info != NULL ? &t->info->quant : NULL;
  WICK_CHECK(ctx, q != NULL && q->count > 0, "%s (%s) has no quantization parameters", what,
             wick_dtype_name(t->type));
  quant_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  int64_t channels = q->count;
  int64_t outer = 1, inner = 1;
  if (channels > 1) {
    int32_t axis = q->quantized_dimension;
    WICK_CHECK(ctx, axis >= 0 && axis < t->rank, "%s: quantized_dimension %d is outside rank %d",
               what, axis, t->rank);
    WICK_CHECK(ctx, (int64_t)t->dims[axis] == channels,
               "%s: %lld per-channel scales for dimension %d of size %d", what, (long long)channels,
               axis, t->dims[axis]);
    for (int32_t i = 0; i < axis; i++) outer *= t->dims[i];
    for (int32_t i = axis + 1; i < t->rank; i++) inner *= t->dims[i];
  } else {
    outer = wick_tensor_elements(t);
  }
  d->scale = wick_op_alloc(ctx, (size_t)channels * sizeof(float));
  d->zero_point = wick_op_alloc(ctx, (size_t)channels * sizeof(int32_t));
  if (d->scale == NULL || d->zero_point == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t c = 0; c < channels; c++) {
    float s = q->scale[c];
    int64_t zp = q->zero_point[c];
    if (divides)
      WICK_CHECK(ctx, s > 0.0f && s <= 3.4028234663852886e38f,
                 "%s: scale[%lld] = %g must be positive and finite", what, (long long)c, (double)s);
    WICK_CHECK(ctx, zp >= INT32_MIN && zp <= INT32_MAX,
               "%s: zero_point[%lld] = %lld is outside int32", what, (long long)c, (long long)zp);
    d->scale[c] = s;
    d->zero_point[c] = (int32_t)zp;
  }
  d->layout = (wick_quant_layout){outer, channels, inner, d->scale, d->zero_point};
  d->kern = fast_kernels(ctx, t->type, &d->layout);
  wick_op_set_data(ctx, d);
  wick_op_set_kernel(ctx, d->kern != NULL ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_REFERENCE,
                     d->kern != NULL ? NULL : "channels or zero point");
  return WICK_OK;
}

/* ---------------------------------------------------------------- DEQUANTIZE */

/* The float16 -> float32 vector kernel of this CPU, or NULL (the reference conversion). */
static wick_f16_to_f32_fn f16_kernel(const wick_op_ctx *ctx) {
  const wick_f32_kernels *k = wick_f32_kernels_select(wick_op_force_reference(ctx));
  return k != NULL ? k->f16_to_f32 : NULL;
}

static wick_status dequantize_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK_SUPPORTED(ctx, is_q_type(in->type) || in->type == WICK_DTYPE_FLOAT16,
                       "input type %s is not supported (int8, uint8, int16, float16)",
                       wick_dtype_name(in->type));
  if (in->type != WICK_DTYPE_FLOAT16)
    WICK_TRY(build_layout(ctx, in, "input", false));
  else if (f16_kernel(ctx) != NULL) /* (folded at prepare for constant weights) */
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "float16");
  else /* a scalar conversion per element */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "float16");
  return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims);
}

static wick_status dequantize_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (in->type == WICK_DTYPE_FLOAT16) {
    const wick_f16_to_f32_fn convert = f16_kernel(ctx);
    if (convert != NULL)
      convert((size_t)wick_tensor_elements(in), in->data, out->data);
    else
      wick_cast__reference(WICK_DTYPE_FLOAT16, WICK_DTYPE_FLOAT32, wick_tensor_elements(in),
                           in->data, out->data);
    return WICK_OK;
  }
  const quant_data *d = wick_op_data(ctx);
  if (d->kern != NULL)
    return run_fast(ctx, d, false, in->type, in->data, out->data, (size_t)wick_tensor_elements(in));
  wick_dequantize__reference(in->type, &d->layout, in->data, out->data);
  return WICK_OK;
}

/* v2 int8, v3 int16/float16, v4 sparse (refused by the loader), v5 int8
 * per-channel; v6 (int4) is not implemented. */
const wick_op_def wick_op_dequantize = {"DEQUANTIZE",       WICK_BUILTIN_DEQUANTIZE, 5,
                                        dequantize_prepare, dequantize_invoke,       0};

/* ---------------------------------------------------------------- QUANTIZE */

static wick_status quantize_prepare(wick_op_ctx *ctx) {
  if (wick_op_input(ctx, 0) && wick_op_input(ctx, 0)->type != WICK_DTYPE_FLOAT32)
    return wick_requantize_prepare(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_FLOAT32,
                       "input type %s is not supported (float32; requantization of integer "
                       "inputs is not implemented)",
                       wick_dtype_name(in->type));
  WICK_CHECK_SUPPORTED(ctx, is_q_type(out->type),
                       "output type %s is not supported (int8, uint8, int16)",
                       wick_dtype_name(out->type));
  /* Shape the output first: the layout is checked against the output's
   * (= the input's) current shape. */
  WICK_TRY(wick_op_set_output(ctx, 0, out->type, in->rank, in->dims));
  return build_layout(ctx, out, "output", true);
}

static wick_status quantize_invoke(wick_op_ctx *ctx) {
  if (wick_op_input(ctx, 0) && wick_op_input(ctx, 0)->type != WICK_DTYPE_FLOAT32)
    return wick_requantize_invoke(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  const quant_data *d = wick_op_data(ctx);
  if (d->kern != NULL)
    return run_fast(ctx, d, true, out->type, in->data, out->data, (size_t)wick_tensor_elements(in));
  wick_quantize__reference(out->type, &d->layout, in->data, out->data);
  return WICK_OK;
}

/* v2 int16 output, v3 per-channel; v4 (int4) is not implemented. */
const wick_op_def wick_op_quantize = {"QUANTIZE",       WICK_BUILTIN_QUANTIZE, 3,
                                      quantize_prepare, quantize_invoke,       0};
